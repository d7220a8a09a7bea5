// TTFT and tok/s per minute (nearest-rank p50/p95) and the share of requests and earnings by model.
import { expect, it } from 'vitest';
import type { RequestView } from '../../../src/shared/types';
import { hasSpread, modelShare, perfEmpty, perfSeries } from '../../../src/renderer/lib/perf';

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
  const rs = [
    req(T0 + 1000, 100, 50, 1000),
    req(T0 + 2000, 200, 100, 1000),
    req(T0 + 3000, 900, 10, 1000),
    req(T0 + 4000, 5000, 1, 1000, 'error'),
    req(T0 + 70_000, 300, 20, 1000),
  ];
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

it('the wait in the queue is apart from the engine time to first token', () => {
  const queued: RequestView = { ...req(T0 + 5000, 700, 10, 1000), admittedAt: 0 };
  queued.admittedAt = queued.startedAt + 500; // waited 500 ms for a slot, the engine answered 200 ms later
  const [p] = perfSeries([queued], T0 + 60_000, 60_000);
  expect(p).toMatchObject({ requests: 1, queueP50: 500, ttftP50: 200 });
  // A request never admitted through the scheduler (no admittedAt): no queue figure, time to first token from its start.
  const [q] = perfSeries([req(T0 + 5000, 300, 10, 1000)], T0 + 60_000, 60_000);
  expect(q).toMatchObject({ queueP50: null, ttftP50: 300 });
});

it('p95 is drawn only where a minute had two requests or more', () => {
  expect(hasSpread(perfSeries([req(T0 + 1000, 100, 5, 500)], T0 + 60_000, 60_000))).toBe(false);
  expect(hasSpread(perfSeries([req(T0 + 1000, 100, 5, 500), req(T0 + 2000, 300, 5, 500)], T0 + 60_000, 60_000))).toBe(true);
});

it('an empty chart says why: nothing finished, or finished requests that lack its figure (never "no finished requests" beside them)', () => {
  expect(perfEmpty(perfSeries([], T0 + 120_000, 120_000))).toEqual({ code: 'no_finished_requests' });
  // Two non-streamed answers: finished, tokens counted, no first token seen: no TTFT point, a tok/s point.
  const whole = (finishedAt: number): RequestView => ({ ...req(finishedAt, 0, 20, 1000), stream: false, firstTokenAt: undefined });
  const s = perfSeries([whole(T0 + 1000), whole(T0 + 2000)], T0 + 120_000, 120_000);
  expect(s.every((p) => p.ttftP50 === null)).toBe(true);
  expect(s[0]?.tpsP50).toBeGreaterThan(0);
  expect(perfEmpty(s)).toEqual({ code: 'none_measured', finished: 2 });
});
