// The rollup tables against the rows they sum: usage_15m (per 15 minutes and model) and usage_1d (per
// UTC day and model, schema v5) must equal a GROUP BY over `usage`, column by column (each column the
// table has: v5's usage_15m has no hub-only ones). From v6 also the summaries kept as rows are written:
// the perf bins (per day and per 16 days) against the rows binned the same way, and each row's stored CSV
// line against the line csvLine makes from the row.
import type Database from 'better-sqlite3';
import { CSV_SELECT, csvLine, csvRowOf, type CsvRaw } from '../../../src/core/ledger/csv';
import { perfFromRowsSql } from '../../../src/core/ledger/summaries';

const SUMS = [
  'requests',
  'errors',
  'tokens_in',
  'tokens_out',
  'earnings',
  'hub_requests',
  'hub_errors',
  'hub_tokens_in',
  'hub_tokens_out',
  'energy_wh',
  'cost',
] as const;

const FROM_ROWS = `count(*) AS requests, sum(status IN ('error', 'rejected')) AS errors, sum(tokens_in) AS tokens_in,
  sum(tokens_out) AS tokens_out, sum(earnings) AS earnings, sum(source = 'hub') AS hub_requests,
  sum(source = 'hub' AND status IN ('error', 'rejected')) AS hub_errors,
  sum(CASE WHEN source = 'hub' THEN tokens_in ELSE 0 END) AS hub_tokens_in,
  sum(CASE WHEN source = 'hub' THEN tokens_out ELSE 0 END) AS hub_tokens_out,
  sum(coalesce(energy_wh, 0)) AS energy_wh, sum(coalesce(cost, 0)) AS cost`;

type Row = Record<string, number | string>;

function keyed(rows: Row[], key: string): Map<string, Row> {
  return new Map(rows.map((r) => [`${r[key]} ${r.model}`, r]));
}

/** Every difference between a rollup table and the rows (empty when they agree). Sums of REAL
 * columns are compared to 1e-9 relative: the rollups add in insert order, GROUP BY in its own. */
export function rollupDrift(db: Database.Database): string[] {
  const out: string[] = [];
  const tables: Array<[string, string, number]> = [['usage_15m', 'bucket', 15 * 60_000]];
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'usage_1d'").get()) tables.push(['usage_1d', 'day', 86_400_000]);
  for (const [table, key, width] of tables) {
    const truth = keyed(db.prepare(`SELECT finished_at - finished_at % ${width} AS ${key}, model, ${FROM_ROWS} FROM usage GROUP BY 1, 2`).all() as Row[], key);
    const held = keyed(db.prepare(`SELECT * FROM ${table}`).all() as Row[], key);
    for (const [k, t] of truth) {
      const h = held.get(k);
      if (!h) {
        out.push(`${table} ${k}: missing`);
        continue;
      }
      for (const c of SUMS) {
        if (!(c in h)) continue; // v5's usage_15m has no hub-only columns
        const a = Number(t[c]);
        const b = Number(h[c]);
        if (Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a))) out.push(`${table} ${k} ${c}: rows ${a}, rollup ${b}`);
      }
    }
    for (const k of held.keys()) if (!truth.has(k)) out.push(`${table} ${k}: no rows`);
  }
  if (db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'usage_csv'").get()) out.push(...summaryDrift(db));
  return out;
}

/** Every difference between the v6 summaries and the rows (empty when they agree). */
function summaryDrift(db: Database.Database): string[] {
  const out: string[] = [];
  for (const [table, key] of [
    ['usage_perf_1d', 'day'],
    ['usage_perf_16d', 'block'],
  ] as const) {
    // The truth: the same bins made from the rows, in a scratch copy of the table.
    db.exec(`CREATE TEMP TABLE truth AS SELECT * FROM ${table} WHERE 0`);
    try {
      db.prepare(perfFromRowsSql(table).replace(`INSERT INTO ${table}`, 'INSERT INTO temp.truth')).run({ from: 0, to: Number.MAX_SAFE_INTEGER });
      const diff = db
        .prepare(
          `SELECT 'missing' AS what, * FROM (SELECT * FROM temp.truth EXCEPT SELECT * FROM ${table})
           UNION ALL SELECT 'extra', * FROM (SELECT * FROM ${table} EXCEPT SELECT * FROM temp.truth) LIMIT 20`,
        )
        .all() as Array<Record<string, unknown>>;
      for (const d of diff)
        out.push(`${table} ${d.what}: ${key} ${String(d[key])} ${String(d.model)} metric ${String(d.metric)} bin ${String(d.bin)} n ${String(d.n)}`);
    } finally {
      db.exec('DROP TABLE temp.truth');
    }
  }
  const lines = new Map((db.prepare('SELECT id, line FROM usage_csv').raw(true).all() as Array<[number, string]>).map(([id, line]) => [id, line]));
  for (const raw of db.prepare(CSV_SELECT).raw(true).all() as CsvRaw[]) {
    const row = csvRowOf(raw);
    const line = lines.get(row.id);
    if (line !== csvLine(row))
      out.push(`usage_csv ${row.id}: ${line === undefined ? 'missing' : `stored ${JSON.stringify(line)}, row makes ${JSON.stringify(csvLine(row))}`}`);
    lines.delete(row.id);
  }
  for (const id of lines.keys()) out.push(`usage_csv ${id}: no row`);
  return out;
}
