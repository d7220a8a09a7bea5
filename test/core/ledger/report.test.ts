// Reports in local time. The file runs in India time (UTC+5:30), where local hours start at :30 UTC,
// so hour and day buckets that were secretly UTC would fail here; one block switches to Berlin for
// a daylight-saving day.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UsageRecord } from '../../../src/shared/types';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { bucketStarts, type BucketSize } from '../../../src/core/ledger/time-buckets';
import { ledgerPerTest, rec } from '../../support/ledger/helpers';
import { EXACT_MAX } from '../../../src/core/ledger/queries';

const savedTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Asia/Kolkata';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

let ledger: Ledger;
ledgerPerTest((l) => (ledger = l));

const local = (y: number, mo: number, d: number, h = 0, mi = 0, s = 0, ms = 0): number => new Date(y, mo - 1, d, h, mi, s, ms).getTime();

describe('report buckets at their edges (local time, Asia/Kolkata)', () => {
  it('the zone is really +5:30 here', () => {
    expect(local(2025, 3, 10, 10, 0)).toBe(Date.UTC(2025, 2, 10, 4, 30));
  });

  it('15-minute buckets split at :00 :15 :30 :45', () => {
    const a = local(2025, 3, 10, 10, 14, 59, 999);
    const b = local(2025, 3, 10, 10, 15);
    ledger.record(rec(a));
    ledger.record(rec(b));
    ledger.record(rec(b, { status: 'error' }));
    const r = ledger.report(local(2025, 3, 10, 10, 0), local(2025, 3, 10, 10, 30), '15m');
    expect(r.buckets.map((x) => [x.start, x.requests, x.errors])).toEqual([
      [local(2025, 3, 10, 10, 0), 1, 0],
      [local(2025, 3, 10, 10, 15), 2, 1],
    ]);
  });

  it('hour buckets start at the local full hour (:30 UTC in India)', () => {
    ledger.record(rec(local(2025, 3, 10, 9, 59, 59, 999)));
    ledger.record(rec(local(2025, 3, 10, 10, 0)));
    ledger.record(rec(local(2025, 3, 10, 10, 59, 59, 999)));
    const r = ledger.report(local(2025, 3, 10, 9, 0), local(2025, 3, 10, 11, 0), 'hour');
    expect(r.buckets.map((x) => [new Date(x.start).toISOString(), x.requests])).toEqual([
      ['2025-03-10T03:30:00.000Z', 1],
      ['2025-03-10T04:30:00.000Z', 2],
    ]);
  });

  it('day buckets start at local midnight', () => {
    ledger.record(rec(local(2025, 3, 10, 23, 59, 59, 999)));
    ledger.record(rec(local(2025, 3, 11, 0, 0)));
    const r = ledger.report(local(2025, 3, 10), local(2025, 3, 12), 'day');
    expect(r.buckets.map((x) => [x.start, x.requests])).toEqual([
      [local(2025, 3, 10), 1],
      [local(2025, 3, 11), 1],
    ]);
  });

  it('a range that does not start on an edge: first bucket starts before it but counts only records inside', () => {
    ledger.record(rec(local(2025, 3, 10, 10, 5)));
    ledger.record(rec(local(2025, 3, 10, 10, 7)));
    ledger.record(rec(local(2025, 3, 10, 11, 52)));
    const r = ledger.report(local(2025, 3, 10, 10, 7), local(2025, 3, 10, 11, 52), 'hour');
    expect(r.buckets.map((x) => [x.start, x.requests])).toEqual([
      [local(2025, 3, 10, 10), 1],
      [local(2025, 3, 10, 11), 0],
    ]);
    expect(r.totals.requests).toBe(1);
  });

  it('every bucket of the range is present, empty ones as zeros', () => {
    const r = ledger.report(local(2025, 3, 10), local(2025, 3, 11), '15m');
    expect(r.buckets).toHaveLength(96);
    expect(r.buckets.every((b) => b.requests === 0 && b.earnings === 0)).toBe(true);
    expect(r.errorRate).toBe(0);
  });

  it('refuses a report with too many buckets instead of building it', () => {
    expect(() => ledger.report(0, Date.UTC(2025, 0, 1), '15m')).toThrow(expect.objectContaining({ code: 'too_many_buckets' }));
  });
});

/** A small deterministic PRNG. */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('sums agree with a brute-force count for random ranges and buckets', () => {
  it('totals, buckets and per-model sums match the records, whatever the edges', () => {
    const rand = rng(7);
    const start = local(2025, 2, 1);
    const span = 20 * 86_400_000;
    const records: UsageRecord[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = start + Math.floor(rand() * span);
      records.push(
        rec(t, {
          model: ['a', 'b', 'c'][Math.floor(rand() * 3)]!,
          tokensIn: Math.floor(rand() * 1000),
          tokensOut: Math.floor(rand() * 500),
          status: rand() < 0.1 ? 'error' : 'ok',
        }),
      );
    }
    // Some records exactly on 15-minute edges.
    for (let i = 0; i < 50; i++) records.push(rec(start + i * 900_000 * 7, { model: 'a' }));
    ledger.setPrice('*', 1, 2, 0);
    ledger.recordBatch(records);
    const sizes: BucketSize[] = ['15m', 'hour', 'day'];
    for (let k = 0; k < 30; k++) {
      const from = start + Math.floor(rand() * span);
      const to = from + Math.floor(rand() * (k % 3 === 0 ? 3 * 86_400_000 : 5 * 3_600_000));
      const size = sizes[k % 3]!;
      const inside = records.filter((r) => r.finishedAt >= from && r.finishedAt < to);
      const r = ledger.report(from, to, size);
      expect(r.totals.requests).toBe(inside.length);
      expect(r.totals.errors).toBe(inside.filter((x) => x.status === 'error').length);
      expect(r.totals.tokensOut).toBe(inside.reduce((n, x) => n + x.tokensOut, 0));
      expect(ledger.totals(from, to)).toEqual(r.totals);
      const starts = bucketStarts(from, to, size);
      expect(r.buckets.map((b) => b.start)).toEqual(starts);
      r.buckets.forEach((b, i) => {
        const end = starts[i + 1] ?? to;
        expect(b.requests).toBe(inside.filter((x) => x.finishedAt >= b.start && x.finishedAt < end).length);
      });
      for (const m of r.perModel) {
        expect(m.requests).toBe(inside.filter((x) => x.model === m.model).length);
        expect(m.tokensIn).toBe(inside.filter((x) => x.model === m.model).reduce((n, x) => n + x.tokensIn, 0));
      }
    }
  });
});

describe('per model: percentiles, error rate, top models', () => {
  it('p50 / p95 latency and p50 tokens/s of successful requests (nearest rank)', () => {
    const t = local(2025, 3, 10, 12);
    // 100 successful requests with latency 1..100 ms and speed 1..100 tok/s, inserted shuffled.
    const order = Array.from({ length: 100 }, (_, i) => i + 1).sort((a, b) => ((a * 37) % 101) - ((b * 37) % 101));
    for (const i of order) ledger.record(rec(t + i, { model: 'm', latencyMs: i, tokensPerSecond: i }));
    // Failures are slow but must not move the percentiles.
    for (let i = 0; i < 10; i++) ledger.record(rec(t + 200 + i, { model: 'm', latencyMs: 99_999, status: 'error', tokensPerSecond: null }));
    ledger.record(rec(t + 300, { model: 'only-errors', status: 'error' }));
    const r = ledger.report(t, t + 1000, 'hour');
    const m = r.perModel.find((x) => x.model === 'm')!;
    expect([m.p50LatencyMs, m.p95LatencyMs, m.p50TokensPerSecond]).toEqual([50, 95, 50]);
    expect(m).toMatchObject({ requests: 110, errors: 10 });
    expect(r.perModel.find((x) => x.model === 'only-errors')).toMatchObject({ p50LatencyMs: null, p95LatencyMs: null, p50TokensPerSecond: null });
    expect(r.errorRate).toBeCloseTo(11 / 111, 12);
  });

  it('topModels orders by requests and honours n', () => {
    const t = local(2025, 3, 10, 12);
    for (const [model, n] of [
      ['x', 3],
      ['y', 5],
      ['z', 1],
    ] as const)
      for (let i = 0; i < n; i++) ledger.record(rec(t + i, { model }));
    expect(ledger.topModels(t, t + 100, 2).map((m) => [m.model, m.requests])).toEqual([
      ['y', 5],
      ['x', 3],
    ]);
  });

  it('above EXACT_MAX successful requests of a model, percentiles come from the perf summaries, within 2.5 %', () => {
    // 40 days from mid-day: partial days at both edges, whole days, and whole 16-day blocks.
    const t = local(2025, 3, 1, 13);
    const n = 20_000;
    const step = Math.floor((40 * 86_400_000) / n);
    const batch: UsageRecord[] = [];
    const values: number[] = [];
    for (let i = 0; i < n; i++) {
      const latency = 100 + ((i * 7919) % 5000);
      values.push(latency);
      batch.push(rec(t + i * step, { model: 'busy', latencyMs: latency, tokensPerSecond: latency / 10 }));
    }
    ledger.recordBatch(batch);
    expect(n).toBeGreaterThan(EXACT_MAX);
    const sorted = Float64Array.from(values).sort();
    const exact = (p: number) => sorted[Math.ceil(p * n) - 1]!;
    const m = ledger.report(t, t + n * step, 'day').perModel[0]!;
    expect(Math.abs(m.p50LatencyMs! - exact(0.5)) / exact(0.5)).toBeLessThan(0.025);
    expect(Math.abs(m.p95LatencyMs! - exact(0.95)) / exact(0.95)).toBeLessThan(0.025);
    expect(Math.abs(m.p50TokensPerSecond! - exact(0.5) / 10) / (exact(0.5) / 10)).toBeLessThan(0.025);
    // The same range read from the rows alone (below the cut) is exact: a short range of the same model.
    const few = ledger.report(t, t + 100 * step, 'day').perModel[0]!;
    expect(few.p50LatencyMs).toBe(Float64Array.from(values.slice(0, 100)).sort()[49]);
  });
});

describe('a daylight-saving day (Europe/Berlin, 30 March 2025 has 23 hours)', () => {
  beforeAll(() => {
    process.env.TZ = 'Europe/Berlin';
  });
  afterAll(() => {
    process.env.TZ = 'Asia/Kolkata';
  });

  it('day and hour buckets follow the wall clock', () => {
    const day = local(2025, 3, 30);
    const next = local(2025, 3, 31);
    expect(next - day).toBe(23 * 3_600_000);
    ledger.record(rec(local(2025, 3, 30, 1, 59)));
    ledger.record(rec(local(2025, 3, 30, 3, 0))); // the first minute after the jump
    const days = ledger.report(day, next, 'day');
    expect(days.buckets.map((b) => [b.start, b.requests])).toEqual([[day, 2]]);
    const hours = ledger.report(day, next, 'hour');
    expect(hours.buckets).toHaveLength(23);
    expect(hours.buckets.filter((b) => b.requests > 0).map((b) => new Date(b.start).getHours())).toEqual([1, 3]);
  });
});
