// Time to first token and tokens per second over time (p50/p95 per minute) from the requests the
// console holds, and each model's share of requests and earnings. Pure; the Dashboard draws them.
import type { ModelUsage } from '../../shared/bridge';
import type { RequestView } from '../../shared/types';
import { tokensPerSecond } from './request-math';

/** Nearest rank, as the ledger's usage report computes it: always a value that really occurred. */
function nearestRank(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil(p * sorted.length))) - 1] ?? null;
}

export interface PerfPoint {
  ts: number; // bucket start
  requests: number;
  ttftP50: number | null;
  ttftP95: number | null;
  tpsP50: number | null;
  tpsP95: number | null;
}

/** Finished, successful requests in [now - windowMs, now), bucketed by when they finished. */
export function perfSeries(requests: RequestView[], now: number, windowMs = 30 * 60_000, bucketMs = 60_000): PerfPoint[] {
  const start = Math.floor((now - windowMs) / bucketMs) * bucketMs;
  const n = Math.ceil((now - start) / bucketMs);
  const ttft: number[][] = Array.from({ length: n }, () => []);
  const tps: number[][] = Array.from({ length: n }, () => []);
  for (const r of requests) {
    if (r.status !== 'ok' || r.finishedAt === undefined || r.finishedAt < start || r.finishedAt >= now) continue;
    const i = Math.floor((r.finishedAt - start) / bucketMs);
    if (r.firstTokenAt !== undefined) ttft[i]!.push(r.firstTokenAt - r.startedAt);
    const t = tokensPerSecond(r);
    if (t !== null) tps[i]!.push(t);
  }
  return ttft.map((t, i) => {
    const a = t.sort((x, y) => x - y);
    const b = tps[i]!.sort((x, y) => x - y);
    return { ts: start + i * bucketMs, requests: Math.max(a.length, b.length), ttftP50: nearestRank(a, 0.5), ttftP95: nearestRank(a, 0.95), tpsP50: nearestRank(b, 0.5), tpsP95: nearestRank(b, 0.95) };
  });
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
    .map((m) => ({ model: m.model, requests: m.requests, earnings: m.earnings, requestShare: req > 0 ? m.requests / req : 0, earningShare: earn > 0 ? m.earnings / earn : 0 }))
    .sort((x, y) => y.requests - x.requests || y.earnings - x.earnings || x.model.localeCompare(y.model));
}
