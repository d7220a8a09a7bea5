// The summaries kept as rows are written (schema v6), so a year of a busy rig reads in milliseconds:
// - usage_csv: each row's CSV line, made once when the row is written (a row never changes after), keyed
//   (finished_at, id): an export reads one string a row, in order, instead of 22 columns to format.
// - usage_perf_1d / usage_perf_16d: per UTC day (and per 16 UTC days) and model, how many successful
//   requests fell in each latency and speed bin. Bins are 5 % wide on a log scale, so a percentile read
//   from them is within ±2.5 % of the true value; long ranges read them instead of every row's values.
// Both perf tables are kept by one insert trigger, in the same transaction as the row (like the rollups).

/** A UTC day (migrations.ts' ROLLUP_DAY_MS; not imported: the migrations import this file). */
const ROLLUP_DAY_MS = 86_400_000;

/** A perf bin is this much wider than the one below it. */
export const PERF_STEP = 1.05;
export const LN_STEP = Math.log(PERF_STEP);
/** Values below this (a 0 ms latency) share the lowest bin. */
const FLOOR = 0.001;
/** Width of a usage_perf_16d block: 16 UTC days. */
export const PERF_BLOCK_MS = 16 * ROLLUP_DAY_MS;

/** The metrics a perf row counts. */
export const METRIC = { latency: 0, speed: 1 } as const;

/** The bin of a value, as the trigger computes it in SQL (binSql). */
export function perfBin(x: number): number {
  return Math.floor(Math.log(Math.max(x, FLOOR)) / LN_STEP);
}

/** The value a bin stands for: its geometric middle. */
export function binValue(bin: number): number {
  return Math.exp((bin + 0.5) * LN_STEP);
}

/** perfBin in SQL (SQLite's math functions; better-sqlite3 builds them in). */
function binSql(col: string): string {
  return `CAST(floor(ln(max(${col}, ${FLOOR})) / ${LN_STEP}) AS INTEGER)`;
}

/** The statements adding NEW's latency and speed to a perf table keyed by (<key>, model, metric, bin). */
function perfUpserts(table: string, key: string, width: number): string {
  const upsert = `ON CONFLICT (${key}, model, metric, bin) DO UPDATE SET n = n + 1;`;
  return `INSERT INTO ${table} (${key}, model, metric, bin, n)
            VALUES (NEW.finished_at - NEW.finished_at % ${width}, NEW.model, ${METRIC.latency}, ${binSql('NEW.latency_ms')}, 1) ${upsert}
          INSERT INTO ${table} (${key}, model, metric, bin, n)
            SELECT NEW.finished_at - NEW.finished_at % ${width}, NEW.model, ${METRIC.speed}, ${binSql('NEW.tokens_per_second')}, 1
            WHERE NEW.tokens_per_second IS NOT NULL ${upsert}`;
}

export const PERF_TABLES_SQL = `
  CREATE TABLE usage_perf_1d (
    day    INTEGER NOT NULL,
    model  TEXT    NOT NULL,
    metric INTEGER NOT NULL,
    bin    INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (day, model, metric, bin)
  ) WITHOUT ROWID;
  CREATE TABLE usage_perf_16d (
    block  INTEGER NOT NULL,
    model  TEXT    NOT NULL,
    metric INTEGER NOT NULL,
    bin    INTEGER NOT NULL,
    n      INTEGER NOT NULL,
    PRIMARY KEY (block, model, metric, bin)
  ) WITHOUT ROWID;
  CREATE TRIGGER usage_perf AFTER INSERT ON usage WHEN NEW.status = 'ok' BEGIN
    ${perfUpserts('usage_perf_1d', 'day', ROLLUP_DAY_MS)}
    ${perfUpserts('usage_perf_16d', 'block', PERF_BLOCK_MS)}
  END;`;

/**
 * Fills a perf table from the rows finished in [@from, @to) (a migration's backfill, or what a prune left
 * of a day or block it cut through): the same bins the trigger writes.
 */
export function perfFromRowsSql(table: 'usage_perf_1d' | 'usage_perf_16d'): string {
  const [key, width] = table === 'usage_perf_1d' ? ['day', ROLLUP_DAY_MS] : ['block', PERF_BLOCK_MS];
  const part = (metric: number, col: string, extra: string) =>
    `SELECT finished_at - finished_at % ${width} AS k, model, ${metric} AS metric, ${binSql(col)} AS bin, count(*) AS n
     FROM usage WHERE status = 'ok' AND finished_at >= @from AND finished_at < @to ${extra} GROUP BY 1, 2, 3, 4`;
  return `INSERT INTO ${table} (${key}, model, metric, bin, n)
    SELECT k, model, metric, bin, n FROM (${part(METRIC.latency, 'latency_ms', '')} UNION ALL ${part(METRIC.speed, 'tokens_per_second', 'AND tokens_per_second IS NOT NULL')})`;
}

export const CSV_TABLE_SQL = `
  CREATE TABLE usage_csv (
    finished_at INTEGER NOT NULL,
    id          INTEGER NOT NULL,
    line        TEXT    NOT NULL,
    PRIMARY KEY (finished_at, id)
  ) WITHOUT ROWID;`;
