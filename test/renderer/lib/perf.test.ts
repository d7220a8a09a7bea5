// TTFT and tok/s per minute (nearest-rank p50/p95) and the share of requests and earnings by model.
import { expect, it } from 'vitest';
import type { RequestView } from '../../../src/shared/types';
import { modelShare, perfSeries } from '../../../src/renderer/lib/perf';

const T0 = 1_700_000_040_000; // a minute boundary
const req = (finishedAt: number, ttft: number, tokens: number, genMs: number, status: RequestView['status'] = 'ok'): RequestView => ({
  id: String(finishedAt) + ttft,
  source: 'hub',
  model: 'm',
  status,
  stream: true,
  startedAt: finishedAt - genMs - ttft,
  firstTokenAt: finishedAt - genMs,
  finishedAt,
  tokensIn: 1,
  tokensOut: tokens,
  estimated: false,
});

it('buckets finished ok requests per minute with p50/p95', () => {
  const rs = [req(T0 + 1000, 100, 50, 1000), req(T0 + 2000, 200, 100, 1000), req(T0 + 3000, 900, 10, 1000), req(T0 + 4000, 5000, 1, 1000, 'error'), req(T0 + 70_000, 300, 20, 1000)];
  const s = perfSeries(rs, T0 + 120_000, 120_000);
  expect(s).toHaveLength(2);
  expect(s[0]).toMatchObject({ ts: T0, requests: 3, ttftP50: 200, ttftP95: 900, tpsP50: 50, tpsP95: 100 });
  expect(s[1]).toMatchObject({ ts: T0 + 60_000, requests: 1, ttftP50: 300, tpsP50: 20 });
  expect(perfSeries([], T0 + 120_000, 120_000).every((p) => p.ttftP50 === null)).toBe(true);
});

it('shares requests and earnings by model, largest first', () => {
  const base = { errors: 0, tokensIn: 0, tokensOut: 0, p50LatencyMs: null, p95LatencyMs: null, p50TokensPerSecond: null };
  const rows = modelShare([
    { ...base, model: 'a', requests: 1, earnings: 0.3 },
    { ...base, model: 'b', requests: 3, earnings: 0.1 },
  ]);
  expect(rows.map((r) => r.model)).toEqual(['b', 'a']);
  expect(rows[0]).toMatchObject({ requestShare: 0.75, earningShare: 0.25 });
  expect(modelShare([{ ...base, model: 'z', requests: 0, earnings: 0 }])[0]).toMatchObject({ requestShare: 0, earningShare: 0 });
});
