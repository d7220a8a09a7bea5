// The rollup tables against the rows they sum: usage_15m (per 15 minutes and model) and usage_1d (per
// UTC day and model, schema v5) must equal a GROUP BY over `usage`, column by column (each column the
// table has: v5's usage_15m has no hub-only ones).
import type Database from 'better-sqlite3';

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
  return out;
}
