// Read side of the ledger. Ranges are half-open, [from, to), in epoch ms of finished_at.
//
// Sums come from the 15-minute rollups (usage_15m) for the whole buckets inside a range and from
// the raw rows only for the partial buckets at its edges, so every sum is exact for any range and
// a year of data costs rollup rows instead of a million records. Whole UTC days inside a range come
// from the daily rollups (usage_1d, schema v5), so a year is 365 rows per model. A report bucket is
// just such a range; local hours and days are whole 15-minute buckets in every time zone. Per-model
// sums read the same three sources grouped by model. Percentiles need the raw values: they
// read the covering index usage_model_perf (model, status, finished_at, latency_ms,
// tokens_per_second) without touching the table.
import type Database from 'better-sqlite3';
import type { LocalLifetimeView, ModelUsage, UsageBucket, UsageReport } from '../../shared/bridge';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import { csvLine, type CsvRow } from './csv';
import { ROLLUP_DAY_MS, ROLLUP_MS } from './migrations';
import { percentileOfSorted } from './percentile';
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
/** Values per model above which percentiles are taken from an even sample. */
export const SAMPLE_CAP = 100_000;

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
    | 'recent'
    | 'csvFirst'
    | 'csvNext'
    | 'hubRollup'
    | 'firstAt'
    | 'undelivered',
    Stmt
  >;

  constructor(db: Db) {
    // Every priced row carries the rate it earned at (written with the row; migration v4 filled it in
    // from prices for older rows), so the CSV needs no join on prices. Its pages are read as arrays and
    // made into rows of one fixed shape (csvRow): better-sqlite3's objects of 20-odd keys cost 2-3x
    // more, and v4's extra columns had made the 30-day export 1.4-1.7x slower (bench/ledger.ts).
    const csvSelect = `SELECT u.id, u.${USAGE_COLUMNS.split(', ').join(', u.')}, u.earnings,
      u.rate_in, u.rate_out, u.rate_source, u.energy_wh, u.cost
      FROM usage u`;
    this.s = {
      rawTotals: db.prepare(`SELECT ${RAW_SUMS} FROM usage WHERE ${RANGE}`),
      rollTotals: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_15m WHERE bucket >= ? AND bucket < ?`),
      dayTotals: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_1d WHERE day >= ? AND day < ?`),
      rawByModel: db.prepare(`SELECT model, ${RAW_SUMS} FROM usage WHERE ${RANGE} GROUP BY model`),
      // Less than two days of 15-minute rows (split() hands whole days to usage_1d), read by key.
      rollByModel: db.prepare(`SELECT model, ${ROLLUP_SUMS} FROM usage_15m WHERE bucket >= ? AND bucket < ? GROUP BY model`),
      dayByModel: db.prepare(`SELECT model, ${ROLLUP_SUMS} FROM usage_1d WHERE day >= ? AND day < ? GROUP BY model`),
      latencies: db
        .prepare(`SELECT latency_ms FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE} AND id % ? = 0`)
        .pluck(),
      speeds: db
        .prepare(
          `SELECT tokens_per_second FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE} AND id % ? = 0 AND tokens_per_second IS NOT NULL`,
        )
        .pluck(),
      recent: db.prepare(`SELECT ${USAGE_COLUMNS} FROM usage ORDER BY finished_at DESC, id DESC LIMIT ?`),
      csvFirst: db.prepare(`${csvSelect} WHERE u.finished_at >= ? AND u.finished_at < ? ORDER BY u.finished_at, u.id LIMIT ?`).raw(true),
      csvNext: db
        .prepare(`${csvSelect} WHERE u.finished_at >= ? AND u.finished_at < ? AND (u.finished_at > ? OR u.id > ?) ORDER BY u.finished_at, u.id LIMIT ?`)
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
  private modelSums(from: number, to: number): Map<string, UsageTotals> {
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
   * Per-model sums, and percentiles of successful requests' latency and speed. Percentiles are exact
   * up to SAMPLE_CAP successful requests of a model in the range; beyond that they come from an
   * even 1-in-k sample by row id (at least SAMPLE_CAP / 2 values, well inside a 1% rank error).
   */
  perModel(from: number, to: number): ModelUsage[] {
    const out: ModelUsage[] = [];
    for (const [model, t] of this.modelSums(from, to)) {
      const stride = Math.max(1, Math.ceil((t.requests - t.errors) / SAMPLE_CAP));
      const lat = Float64Array.from(this.s.latencies.all(model, from, to, stride) as number[]).sort();
      const tps = Float64Array.from(this.s.speeds.all(model, from, to, stride) as number[]).sort();
      out.push({
        model,
        ...t,
        p50LatencyMs: percentileOfSorted(lat, 0.5),
        p95LatencyMs: percentileOfSorted(lat, 0.95),
        p50TokensPerSecond: percentileOfSorted(tps, 0.5),
      });
    }
    return out.sort((a, b) => b.requests - a.requests || b.tokensOut - a.tokensOut || a.model.localeCompare(b.model));
  }

  /** Buckets in local time, every bucket of the range present (zeros included), oldest first. */
  buckets(from: number, to: number, size: BucketSize): UsageBucket[] {
    return bucketStarts(from, to, size).map((start) => {
      const t = this.totals(Math.max(from, start), Math.min(to, nextBucket(start, size)));
      return { start, requests: t.requests, tokensIn: t.tokensIn, tokensOut: t.tokensOut, earnings: t.earnings, errors: t.errors, energyWh: t.energyWh ?? 0, cost: t.cost ?? 0 };
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
    const r = this.s.hubRollup.get() as { requests: number | null; failed: number | null; tokens_in: number | null; tokens_out: number | null; earnings: number | null };
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
    ) as CsvRaw[];
    const last = rows[rows.length - 1];
    return { text: rows.map((r) => csvLine(csvRow(r))).join(''), rows: rows.length, next: rows.length === limit && last ? { finishedAt: last[6], id: last[0] } : null };
  }
}

/** One csvSelect row as an array, in its column order. */
type CsvRaw = [
  number,
  string,
  string,
  string,
  string,
  number,
  number,
  number,
  number,
  number,
  number,
  number | null,
  number | null,
  string,
  number | null,
  string | null,
  number,
  number | null,
  number | null,
  string | null,
  number | null,
  number | null,
];

function csvRow(a: CsvRaw): CsvPageRow {
  return {
    id: a[0],
    request_id: a[1],
    source: a[2],
    model: a[3],
    endpoint: a[4],
    started_at: a[5],
    finished_at: a[6],
    tokens_in: a[7],
    tokens_out: a[8],
    estimated: a[9],
    latency_ms: a[10],
    ttft_ms: a[11],
    tokens_per_second: a[12],
    status: a[13],
    status_code: a[14],
    error: a[15],
    earnings: a[16],
    input_per_m: a[17],
    output_per_m: a[18],
    rate_source: a[19],
    energy_wh: a[20],
    cost: a[21],
  };
}
