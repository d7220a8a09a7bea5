// Nearest-rank percentile: the smallest stored value with at least p of the values at or below it.
// It always returns a value that really occurred (no interpolation), which is what an owner
// expects when told "95% of requests finished within X ms".

/** The p-th percentile (0 < p <= 1) of an ascending array, or null when it is empty. */
export function percentileOfSorted(sorted: Float64Array, p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length)));
  return sorted[rank - 1] ?? null;
}
