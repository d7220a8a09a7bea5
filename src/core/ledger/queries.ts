// Read side of the ledger. Ranges are half-open, [from, to), in epoch ms of finished_at.
//
// Sums come from the 15-minute rollups (usage_15m) for the whole buckets inside a range and from
// the raw rows only for the partial buckets at its edges, so every sum is exact for any range and
// a year of data costs rollup rows instead of a million records. Whole UTC days inside a range come
// from the daily rollups (usage_1d, schema v5), so a year is 365 rows per model. A report bucket is
// just such a range; local hours and days are whole 15-minute buckets in every time zone. Per-model
// sums read the same three sources grouped by model. Percentiles of a model with few requests in the
// range read its values (the covering index usage_model_perf); a busier one's come from the perf
// summaries (summaries.ts). The CSV reads the lines made when the rows were written (usage_csv).
import type Database from 'better-sqlite3';
import type { LocalLifetimeView, ModelUsage, UsageBucket, UsageReport } from '../../shared/views/usage';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import type { CsvRow } from './csv';
import { ROLLUP_DAY_MS, ROLLUP_MS } from './migrations';
import { percentileOfSorted } from './percentile';
import { binValue, METRIC, PERF_BLOCK_MS, perfBin } from './summaries';
import { bucketStarts, nextBucket, type BucketSize } from './time-buckets';
import { USAGE_COLUMNS, rowToRecord, type UsageRow } from './usage-record';

type Db = Database.Database;
type Stmt = Database.Statement;

interface SumRow {
  requests: number | null;
  errors: number | null;
  tokens_in: number | null;
  tokens_out: number | null;
  earnings: number | null;
  energy_wh: number | null;
  cost: number | null;
}

/** Hub traffic over the ledger's whole life, to set beside the platform's own record. */
export type HubLifetime = LocalLifetimeView;
interface ModelSum extends SumRow {
  model: string;
}

const ERROR_STATUSES = "status IN ('error', 'rejected')";
const RAW_SUMS = `count(*) AS requests, sum(${ERROR_STATUSES}) AS errors, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(earnings) AS earnings, sum(energy_wh) AS energy_wh, sum(cost) AS cost`;
const ROLLUP_SUMS =
  'sum(requests) AS requests, sum(errors) AS errors, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(earnings) AS earnings, sum(energy_wh) AS energy_wh, sum(cost) AS cost';
const RANGE = 'finished_at >= ? AND finished_at < ?';
/** Successful requests of a model in a range up to which its percentiles are exact (read from its values). */
export const EXACT_MAX = 5_000;

/** Per bin, how many values fell in it. */
interface PerfCounts {
  latency: Map<number, number>;
  speed: Map<number, number>;
}

/** The nearest-rank percentile of binned counts, as the value its bin stands for; null with no values. */
function binnedPercentile(bins: Map<number, number> | undefined, p: number): number | null {
  if (!bins || bins.size === 0) return null;
  const sorted = [...bins].sort((a, b) => a[0] - b[0]);
  const total = sorted.reduce((s, [, n]) => s + n, 0);
  const rank = Math.min(total, Math.max(1, Math.ceil(p * total)));
  let seen = 0;
  for (const [bin, n] of sorted) {
    seen += n;
    if (seen >= rank) return binValue(bin);
  }
  return binValue(sorted[sorted.length - 1]![0]);
}

/** Where the previous CSV page ended. */
export interface Cursor {
  finishedAt: number;
  id: number;
}
export type CsvPageRow = CsvRow & { id: number };

/** A page of the CSV: its lines, how many, and where the next page starts (null: this was the last). */
export interface CsvPage {
  text: string;
  rows: number;
  next: Cursor | null;
}

export function emptyTotals(): UsageTotals {
  return { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0, energyWh: 0, cost: 0 };
}

function addInto(t: UsageTotals, r: SumRow): void {
  t.requests += r.requests ?? 0;
  t.errors += r.errors ?? 0;
  t.tokensIn += r.tokens_in ?? 0;
  t.tokensOut += r.tokens_out ?? 0;
  t.earnings += r.earnings ?? 0;
  t.energyWh = (t.energyWh ?? 0) + (r.energy_wh ?? 0);
  t.cost = (t.cost ?? 0) + (r.cost ?? 0);
}

/** [from, to) cut into the parts each source answers exactly: raw rows inside the partial 15-minute
 * buckets at the edges, whole 15-minute buckets (usage_15m) up to the first and from the last whole
 * UTC day, and those whole days (usage_1d). */
interface Parts {
  raw: Array<[number, number]>;
  quarters: Array<[number, number]>;
  days: [number, number] | null;
}

/** The whole `width` buckets inside [from, to), and what is left at each edge. */
function cut(from: number, to: number, width: number): { edges: Array<[number, number]>; whole: [number, number] | null } {
  const a = Math.ceil(from / width) * width;
  const b = Math.floor(to / width) * width;
  if (a >= b) return { edges: [[from, to]], whole: null };
  const edges: Array<[number, number]> = [];
  if (from < a) edges.push([from, a]);
  if (b < to) edges.push([b, to]);
  return { edges, whole: [a, b] };
}

function split(from: number, to: number): Parts {
  const q = cut(from, to, ROLLUP_MS);
  if (!q.whole) return { raw: q.edges, quarters: [], days: null };
  const d = cut(q.whole[0], q.whole[1], ROLLUP_DAY_MS);
  return { raw: q.edges, quarters: d.edges, days: d.whole };
}

export class UsageQueries {
  private readonly s: Record<
    | 'rawTotals'
    | 'rollTotals'
    | 'dayTotals'
    | 'rawByModel'
    | 'rollByModel'
    | 'dayByModel'
    | 'latencies'
    | 'speeds'
    | 'rawPerf'
    | 'dayPerf'
    | 'blockPerf'
    | 'recent'
    | 'csvFirst'
    | 'csvNext'
    | 'hubRollup'
    | 'firstAt'
    | 'undelivered',
    Stmt
  >;

  constructor(db: Db) {
    this.s = {
      rawTotals: db.prepare(`SELECT ${RAW_SUMS} FROM usage WHERE ${RANGE}`),
      rollTotals: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_15m WHERE bucket >= ? AND bucket < ?`),
      dayTotals: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_1d WHERE day >= ? AND day < ?`),
      rawByModel: db.prepare(`SELECT model, ${RAW_SUMS} FROM usage WHERE ${RANGE} GROUP BY model`),
      // Less than two days of 15-minute rows (split() hands whole days to usage_1d), read by key.
      rollByModel: db.prepare(`SELECT model, ${ROLLUP_SUMS} FROM usage_15m WHERE bucket >= ? AND bucket < ? GROUP BY model`),
      dayByModel: db.prepare(`SELECT model, ${ROLLUP_SUMS} FROM usage_1d WHERE day >= ? AND day < ? GROUP BY model`),
      latencies: db.prepare(`SELECT latency_ms FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE}`).pluck(),
      speeds: db
        .prepare(
          `SELECT tokens_per_second FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE} AND tokens_per_second IS NOT NULL`,
        )
        .pluck(),
      // Every model's successful requests in a partial day at a range's edge (at most a day of rows).
      rawPerf: db.prepare(`SELECT model, latency_ms, tokens_per_second FROM usage WHERE ${RANGE} AND status = 'ok'`).raw(true),
      dayPerf: db.prepare('SELECT model, metric, bin, sum(n) FROM usage_perf_1d WHERE day >= ? AND day < ? GROUP BY model, metric, bin').raw(true),
      blockPerf: db.prepare('SELECT model, metric, bin, sum(n) FROM usage_perf_16d WHERE block >= ? AND block < ? GROUP BY model, metric, bin').raw(true),
      recent: db.prepare(`SELECT ${USAGE_COLUMNS} FROM usage ORDER BY finished_at DESC, id DESC LIMIT ?`),
      // The lines made when the rows were written (usage_csv, in (finished_at, id) order): one string a row.
      csvFirst: db.prepare('SELECT finished_at, id, line FROM usage_csv WHERE finished_at >= ? AND finished_at < ? ORDER BY finished_at, id LIMIT ?').raw(true),
      csvNext: db
        .prepare(
          'SELECT finished_at, id, line FROM usage_csv WHERE finished_at >= ? AND finished_at < ? AND (finished_at > ? OR id > ?) ORDER BY finished_at, id LIMIT ?',
        )
        .raw(true),
      hubRollup: db.prepare(
        'SELECT sum(hub_requests) AS requests, sum(hub_errors) AS failed, sum(hub_tokens_in) AS tokens_in, sum(hub_tokens_out) AS tokens_out, sum(earnings) AS earnings FROM usage_1d',
      ),
      firstAt: db.prepare('SELECT min(finished_at) FROM usage').pluck(),
      undelivered: db.prepare(
        "SELECT count(*) AS requests, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(earnings) AS earnings FROM usage INDEXED BY usage_undelivered WHERE delivered = 0 AND source = 'hub'",
      ),
    };
  }

  totals(from: number, to: number): UsageTotals {
    const t = emptyTotals();
    const { raw, quarters, days } = split(from, to);
    for (const [a, b] of raw) addInto(t, this.s.rawTotals.get(a, b) as SumRow);
    for (const [a, b] of quarters) addInto(t, this.s.rollTotals.get(a, b) as SumRow);
    if (days) addInto(t, this.s.dayTotals.get(days[0], days[1]) as SumRow);
    return t;
  }

  /** Sums per model over [from, to); models without requests in it are left out. */
  modelSums(from: number, to: number): Map<string, UsageTotals> {
    const out = new Map<string, UsageTotals>();
    const add = (rows: ModelSum[]): void => {
      for (const r of rows) {
        if (!r.requests) continue;
        let t = out.get(r.model);
        if (!t) out.set(r.model, (t = emptyTotals()));
        addInto(t, r);
      }
    };
    const { raw, quarters, days } = split(from, to);
    for (const [a, b] of raw) add(this.s.rawByModel.all(a, b) as ModelSum[]);
    for (const [a, b] of quarters) add(this.s.rollByModel.all(a, b) as ModelSum[]);
    if (days) add(this.s.dayByModel.all(days[0], days[1]) as ModelSum[]);
    return out;
  }

  /**
   * Per-model sums, and percentiles of successful requests' latency and speed. A model with at most
   * EXACT_MAX requests in the range gets them exactly, from its values (nearest rank); a busier one from
   * the perf summaries (usage_perf_16d, usage_perf_1d, and the rows of the partial days at the range's
   * edges, binned the same way): within ±2.5 % of the true value, in a few thousand summary rows a year.
   */
  perModel(from: number, to: number): ModelUsage[] {
    const out: ModelUsage[] = [];
    let summaries: Map<string, PerfCounts> | undefined;
    for (const [model, t] of this.modelSums(from, to)) {
      let p: { p50LatencyMs: number | null; p95LatencyMs: number | null; p50TokensPerSecond: number | null };
      if (t.requests - t.errors <= EXACT_MAX) {
        const lat = Float64Array.from(this.s.latencies.all(model, from, to) as number[]).sort();
        const tps = Float64Array.from(this.s.speeds.all(model, from, to) as number[]).sort();
        p = { p50LatencyMs: percentileOfSorted(lat, 0.5), p95LatencyMs: percentileOfSorted(lat, 0.95), p50TokensPerSecond: percentileOfSorted(tps, 0.5) };
      } else {
        summaries ??= this.perfCounts(from, to);
        const c = summaries.get(model);
        p = {
          p50LatencyMs: binnedPercentile(c?.latency, 0.5),
          p95LatencyMs: binnedPercentile(c?.latency, 0.95),
          p50TokensPerSecond: binnedPercentile(c?.speed, 0.5),
        };
      }
      out.push({ model, ...t, ...p });
    }
    return out.sort((a, b) => b.requests - a.requests || b.tokensOut - a.tokensOut || a.model.localeCompare(b.model));
  }

  /** Per model, how many successful requests of [from, to) fell in each latency and speed bin. */
  private perfCounts(from: number, to: number): Map<string, PerfCounts> {
    const out = new Map<string, PerfCounts>();
    const of = (model: string): PerfCounts => {
      let c = out.get(model);
      if (!c) out.set(model, (c = { latency: new Map(), speed: new Map() }));
      return c;
    };
    const add = (rows: Array<[string, number, number, number]>): void => {
      for (const [model, metric, bin, n] of rows) {
        const m = metric === METRIC.latency ? of(model).latency : of(model).speed;
        m.set(bin, (m.get(bin) ?? 0) + n);
      }
    };
    const days = cut(from, to, ROLLUP_DAY_MS);
    for (const [a, b] of days.edges) {
      for (const [model, latency, speed] of this.s.rawPerf.all(a, b) as Array<[string, number, number | null]>) {
        const c = of(model);
        const lb = perfBin(latency);
        c.latency.set(lb, (c.latency.get(lb) ?? 0) + 1);
        if (speed !== null) {
          const sb = perfBin(speed);
          c.speed.set(sb, (c.speed.get(sb) ?? 0) + 1);
        }
      }
    }
    if (days.whole) {
      const blocks = cut(days.whole[0], days.whole[1], PERF_BLOCK_MS);
      if (blocks.whole) add(this.s.blockPerf.all(blocks.whole[0], blocks.whole[1]) as Array<[string, number, number, number]>);
      for (const [a, b] of blocks.edges) add(this.s.dayPerf.all(a, b) as Array<[string, number, number, number]>);
    }
    return out;
  }

  /** Buckets in local time, every bucket of the range present (zeros included), oldest first. */
  buckets(from: number, to: number, size: BucketSize): UsageBucket[] {
    return bucketStarts(from, to, size).map((start) => {
      const t = this.totals(Math.max(from, start), Math.min(to, nextBucket(start, size)));
      return {
        start,
        requests: t.requests,
        tokensIn: t.tokensIn,
        tokensOut: t.tokensOut,
        earnings: t.earnings,
        errors: t.errors,
        energyWh: t.energyWh ?? 0,
        cost: t.cost ?? 0,
      };
    });
  }

  report(from: number, to: number, size: BucketSize): UsageReport {
    const totals = this.totals(from, to);
    return {
      from,
      to,
      totals,
      buckets: this.buckets(from, to, size),
      perModel: this.perModel(from, to),
      errorRate: totals.requests === 0 ? 0 : totals.errors / totals.requests,
    };
  }

  hubLifetime(): HubLifetime {
    const r = this.s.hubRollup.get() as {
      requests: number | null;
      failed: number | null;
      tokens_in: number | null;
      tokens_out: number | null;
      earnings: number | null;
    };
    const u = this.s.undelivered.get() as { requests: number; tokens_in: number | null; tokens_out: number | null; earnings: number | null };
    return {
      requests: r.requests ?? 0,
      failed: r.failed ?? 0,
      tokensIn: r.tokens_in ?? 0,
      tokensOut: r.tokens_out ?? 0,
      earnings: r.earnings ?? 0,
      firstAt: (this.s.firstAt.get() as number | null) ?? null,
      undelivered: { requests: u.requests, tokensIn: u.tokens_in ?? 0, tokensOut: u.tokens_out ?? 0, earnings: u.earnings ?? 0 },
    };
  }

  recent(limit: number): UsageRecord[] {
    return (this.s.recent.all(limit) as UsageRow[]).map(rowToRecord);
  }

  /** One page of CSV lines after the cursor (finished_at, id), oldest first; `next` is null on the last page. */
  csvPage(from: number, to: number, after: Cursor | null, limit: number): CsvPage {
    const rows = (
      after
        ? // The cursor's time is the new lower bound, so each page starts its index search where the last one ended.
          this.s.csvNext.all(Math.max(from, after.finishedAt), to, after.finishedAt, after.id, limit)
        : this.s.csvFirst.all(from, to, limit)
    ) as Array<[number, number, string]>;
    let text = '';
    for (const r of rows) text += r[2];
    const last = rows[rows.length - 1];
    return { text, rows: rows.length, next: rows.length === limit && last ? { finishedAt: last[0], id: last[1] } : null };
  }
}
