// Read side of the ledger. Ranges are half-open, [from, to), in epoch ms of finished_at.
//
// Sums come from the 15-minute rollups (usage_15m) for the whole buckets inside a range and from
// the raw rows only for the partial buckets at its edges, so every sum is exact for any range and
// a year of data costs rollup rows instead of a million records. A report bucket is just such a
// range; local hours and days are whole 15-minute buckets in every time zone. Per-model sums read
// the rollups through their (model, bucket) covering index. Percentiles need the raw values: they
// read the covering index usage_model_perf (model, status, finished_at, latency_ms,
// tokens_per_second) without touching the table.
import type Database from 'better-sqlite3';
import type { LocalLifetimeView, ModelUsage, UsageBucket, UsageReport } from '../../shared/bridge';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import type { CsvRow } from './csv';
import { ROLLUP_MS } from './migrations';
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

/** Splits [from, to) into raw edges and whole rollup buckets. */
function split(from: number, to: number): { raw: Array<[number, number]>; rollup: [number, number] | null } {
  const a = Math.ceil(from / ROLLUP_MS) * ROLLUP_MS;
  const b = Math.floor(to / ROLLUP_MS) * ROLLUP_MS;
  if (a >= b) return { raw: [[from, to]], rollup: null };
  const raw: Array<[number, number]> = [];
  if (from < a) raw.push([from, a]);
  if (b < to) raw.push([b, to]);
  return { raw, rollup: [a, b] };
}

export class UsageQueries {
  private readonly s: Record<
    | 'rawTotals'
    | 'rollTotals'
    | 'rawByModel'
    | 'rollModel'
    | 'models'
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
    const csvSelect = `SELECT u.id, u.${USAGE_COLUMNS.split(', ').join(', u.')}, u.earnings,
      coalesce(u.rate_in, p.input_per_m) AS input_per_m, coalesce(u.rate_out, p.output_per_m) AS output_per_m,
      coalesce(u.rate_source, CASE WHEN p.id IS NULL THEN NULL ELSE 'override' END) AS rate_source, u.energy_wh, u.cost
      FROM usage u LEFT JOIN prices p ON p.id = u.price_id`;
    this.s = {
      rawTotals: db.prepare(`SELECT ${RAW_SUMS} FROM usage WHERE ${RANGE}`),
      rollTotals: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_15m WHERE bucket >= ? AND bucket < ?`),
      rawByModel: db.prepare(`SELECT model, ${RAW_SUMS} FROM usage WHERE ${RANGE} GROUP BY model`),
      rollModel: db.prepare(`SELECT ${ROLLUP_SUMS} FROM usage_15m INDEXED BY usage_15m_model WHERE model = ? AND bucket >= ? AND bucket < ?`),
      // Every model in the rollups, one index seek per model (a "skip scan" written out).
      models: db
        .prepare(
          `WITH RECURSIVE m(x) AS (SELECT min(model) FROM usage_15m UNION ALL SELECT (SELECT min(model) FROM usage_15m WHERE model > x) FROM m WHERE x IS NOT NULL)
           SELECT x FROM m WHERE x IS NOT NULL`,
        )
        .pluck(),
      latencies: db
        .prepare(`SELECT latency_ms FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE} AND id % ? = 0`)
        .pluck(),
      speeds: db
        .prepare(
          `SELECT tokens_per_second FROM usage INDEXED BY usage_model_perf WHERE model = ? AND status = 'ok' AND ${RANGE} AND id % ? = 0 AND tokens_per_second IS NOT NULL`,
        )
        .pluck(),
      recent: db.prepare(`SELECT ${USAGE_COLUMNS} FROM usage ORDER BY finished_at DESC, id DESC LIMIT ?`),
      csvFirst: db.prepare(`${csvSelect} WHERE u.finished_at >= ? AND u.finished_at < ? ORDER BY u.finished_at, u.id LIMIT ?`),
      csvNext: db.prepare(
        `${csvSelect} WHERE u.finished_at >= ? AND u.finished_at < ? AND (u.finished_at > ? OR u.id > ?) ORDER BY u.finished_at, u.id LIMIT ?`,
      ),
      hubRollup: db.prepare(
        'SELECT sum(hub_requests) AS requests, sum(hub_errors) AS failed, sum(hub_tokens_in) AS tokens_in, sum(hub_tokens_out) AS tokens_out, sum(earnings) AS earnings FROM usage_15m',
      ),
      firstAt: db.prepare('SELECT min(finished_at) FROM usage').pluck(),
      undelivered: db.prepare(
        "SELECT count(*) AS requests, sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(earnings) AS earnings FROM usage INDEXED BY usage_undelivered WHERE delivered = 0 AND source = 'hub'",
      ),
    };
  }

  totals(from: number, to: number): UsageTotals {
    const t = emptyTotals();
    const { raw, rollup } = split(from, to);
    for (const [a, b] of raw) addInto(t, this.s.rawTotals.get(a, b) as SumRow);
    if (rollup) addInto(t, this.s.rollTotals.get(rollup[0], rollup[1]) as SumRow);
    return t;
  }

  /** Sums per model over [from, to); models without requests in it are left out. */
  private modelSums(from: number, to: number): Map<string, UsageTotals> {
    const out = new Map<string, UsageTotals>();
    const slot = (model: string): UsageTotals => {
      let t = out.get(model);
      if (!t) out.set(model, (t = emptyTotals()));
      return t;
    };
    const { raw, rollup } = split(from, to);
    for (const [a, b] of raw) for (const r of this.s.rawByModel.all(a, b) as ModelSum[]) addInto(slot(r.model), r);
    if (rollup) {
      for (const model of this.s.models.all() as string[]) {
        const r = this.s.rollModel.get(model, rollup[0], rollup[1]) as SumRow;
        if (r.requests) addInto(slot(model), r);
      }
    }
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

  /** One page of CSV rows after the cursor (finished_at, id), oldest first. */
  csvPage(from: number, to: number, after: Cursor | null, limit: number): CsvPageRow[] {
    const rows = after
      ? // The cursor's time is the new lower bound, so each page starts its index search where the last one ended.
        this.s.csvNext.all(Math.max(from, after.finishedAt), to, after.finishedAt, after.id, limit)
      : this.s.csvFirst.all(from, to, limit);
    return rows as CsvPageRow[];
  }
}
