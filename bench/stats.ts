// Summaries of latency samples: percentiles by nearest rank, and rounding for the report.

export interface Summary {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (q in 0..1). */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(samples: number[]): Summary {
  const s = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of s) sum += v;
  return {
    n: s.length,
    p50: round(percentile(s, 0.5), 3),
    p99: round(percentile(s, 0.99), 3),
    mean: round(s.length ? sum / s.length : Number.NaN, 3),
    max: round(s.length ? (s[s.length - 1] as number) : Number.NaN, 3),
  };
}

export function median(values: number[]): number {
  return percentile(Float64Array.from(values).sort(), 0.5);
}

export function round(v: number, digits = 2): number {
  if (!Number.isFinite(v)) return v;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}

/** a / b, rounded; NaN when b is 0 or either is not a number. */
export function ratio(a: number, b: number, digits = 2): number {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN;
  return round(a / b, digits);
}
