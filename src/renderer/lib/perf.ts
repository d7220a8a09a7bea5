// Over time (p50/p95 per minute) from the requests the console holds: the wait in the queue, the
// engine's time to first token (from when the request was admitted, so queueing is not counted twice)
// and tokens per second; and each model's share of requests and earnings. Pure; the Dashboard draws them.
import type { ModelUsage } from '../../shared/views/usage';
import type { RequestView } from '../../shared/types';
import { engineTtft, queueWait, tokensPerSecond } from './request-math';

/** Nearest rank, as the ledger's usage report computes it: always a value that really occurred. */
function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1] ?? null;
}

export interface PerfPoint {
  ts: number; // bucket start
  requests: number;
  queueP50: number | null;
  queueP95: number | null;
  ttftP50: number | null;
  ttftP95: number | null;
  tpsP50: number | null;
  tpsP95: number | null;
}

/** Why a chart of these points has no line: nothing finished in the span, or what finished lacks its figure. */
export type PerfEmpty = { code: 'no_finished_requests' } | { code: 'none_measured'; finished: number };

export function perfEmpty(data: PerfPoint[]): PerfEmpty {
  const finished = data.reduce((n, p) => n + p.requests, 0);
  return finished === 0 ? { code: 'no_finished_requests' } : { code: 'none_measured', finished };
}

/** Finished, successful requests in [now - windowMs, now), bucketed by when they finished. */
export function perfSeries(requests: RequestView[], now: number, windowMs = 30 * 60_000, bucketMs = 60_000): PerfPoint[] {
  const start = Math.floor((now - windowMs) / bucketMs) * bucketMs;
  const n = Math.ceil((now - start) / bucketMs);
  const queue: number[][] = Array.from({ length: n }, () => []);
  const ttft: number[][] = Array.from({ length: n }, () => []);
  const tps: number[][] = Array.from({ length: n }, () => []);
  const count = new Array<number>(n).fill(0);
  for (const r of requests) {
    if (r.status !== 'ok' || r.finishedAt === undefined || r.finishedAt < start || r.finishedAt >= now) continue;
    const i = Math.floor((r.finishedAt - start) / bucketMs);
    count[i]!++;
    const w = queueWait(r);
    if (w !== null) queue[i]!.push(w);
    const f = engineTtft(r);
    if (f !== null) ttft[i]!.push(f);
    const t = tokensPerSecond(r);
    if (t !== null) tps[i]!.push(t);
  }
  const sorted = (xs: number[]) => xs.sort((x, y) => x - y);
  return ttft.map((t, i) => {
    const q = sorted(queue[i]!);
    const a = sorted(t);
    const b = sorted(tps[i]!);
    return {
      ts: start + i * bucketMs,
      requests: count[i]!,
      queueP50: nearestRank(q, 0.5),
      queueP95: nearestRank(q, 0.95),
      ttftP50: nearestRank(a, 0.5),
      ttftP95: nearestRank(a, 0.95),
      tpsP50: nearestRank(b, 0.5),
      tpsP95: nearestRank(b, 0.95),
    };
  });
}

/** Whether a p95 line says anything beside p50: some minute had two requests or more. */
export function hasSpread(points: PerfPoint[]): boolean {
  return points.some((p) => p.requests >= 2);
}

export interface ShareRow {
  model: string;
  requests: number;
  earnings: number;
  requestShare: number; // 0..1
  earningShare: number; // 0..1
}

/** Each model's share of requests and earnings, largest first. */
export function modelShare(perModel: ModelUsage[]): ShareRow[] {
  const req = perModel.reduce((s, m) => s + m.requests, 0);
  const earn = perModel.reduce((s, m) => s + m.earnings, 0);
  return perModel
    .map((m) => ({
      model: m.model,
      requests: m.requests,
      earnings: m.earnings,
      requestShare: req > 0 ? m.requests / req : 0,
      earningShare: earn > 0 ? m.earnings / earn : 0,
    }))
    .sort((x, y) => y.requests - x.requests || y.earnings - x.earnings || x.model.localeCompare(y.model));
}
