// Schema of the usage ledger as a list of numbered steps. Each step runs once, in its own
// transaction together with the row that records it in `schema_version`, so a crash mid-upgrade
// leaves the database at the previous version, never half-way. Steps are append-only: never edit a
// step that has shipped; add a new one.
import type Database from 'better-sqlite3';
import { CSV_SELECT, csvLine, csvRowOf, type CsvRaw } from './csv';
import { CSV_TABLE_SQL, PERF_TABLES_SQL, perfFromRowsSql } from './summaries';

type Db = Database.Database;

export interface Migration {
  version: number;
  name: string;
  /** `progress` says what a long step is doing (logged: an upgrade of a big ledger takes seconds). */
  up(db: Db, progress: (line: string) => void): void;
}

/** Width of a rollup bucket. Every real time zone offset is a multiple of 15 minutes, so local
 * hours and local days are whole numbers of these buckets. */
export const ROLLUP_MS = 15 * 60_000;
/** Width of a daily rollup row (a UTC day: 96 whole 15-minute buckets). */
export const ROLLUP_DAY_MS = 96 * ROLLUP_MS;

/** The trigger statement adding NEW to a rollup table keyed by (<key>, model). Both rollup tables (v5)
 * take the same sums; usage_1d also the hub-only ones (the lifetime comparison reads only it), as
 * usage_15m did in v4. Shipped steps call it, so its output never changes: a new form is a new function. */
function rollupUpsert(table: string, key: string, width: number, hub: boolean): string {
  const hubCols = hub ? ', hub_requests, hub_errors, hub_tokens_in, hub_tokens_out' : '';
  const hubValues = hub
    ? `, NEW.source = 'hub', NEW.source = 'hub' AND NEW.status IN ('error', 'rejected'),
                  CASE WHEN NEW.source = 'hub' THEN NEW.tokens_in ELSE 0 END,
                  CASE WHEN NEW.source = 'hub' THEN NEW.tokens_out ELSE 0 END`
    : '';
  const hubSet = hub
    ? `
            hub_requests   = hub_requests + excluded.hub_requests,
            hub_errors     = hub_errors + excluded.hub_errors,
            hub_tokens_in  = hub_tokens_in + excluded.hub_tokens_in,
            hub_tokens_out = hub_tokens_out + excluded.hub_tokens_out,`
    : '';
  return `INSERT INTO ${table} (${key}, model, requests, errors, tokens_in, tokens_out, earnings${hubCols}, energy_wh, cost)
          VALUES (NEW.finished_at - NEW.finished_at % ${width}, NEW.model, 1,
                  NEW.status IN ('error', 'rejected'), NEW.tokens_in, NEW.tokens_out, NEW.earnings${hubValues},
                  coalesce(NEW.energy_wh, 0), coalesce(NEW.cost, 0))
          ON CONFLICT (${key}, model) DO UPDATE SET
            requests       = requests + 1,
            errors         = errors + excluded.errors,
            tokens_in      = tokens_in + excluded.tokens_in,
            tokens_out     = tokens_out + excluded.tokens_out,
            earnings       = earnings + excluded.earnings,${hubSet}
            energy_wh      = energy_wh + excluded.energy_wh,
            cost           = cost + excluded.cost;`;
}

/** A rollup table keyed by (<key>, model): the sums every rollup takes, then `extra` columns (name, SQL
 * type). Shipped steps call it (v3, v5), so its output never changes: a new form is a new function. */
function rollupTable(name: string, key: string, extra: [string, 'INTEGER' | 'REAL'][] = []): string {
  const columns: [string, string][] = [
    [key, 'INTEGER'],
    ['model', 'TEXT'],
    ['requests', 'INTEGER'],
    ['errors', 'INTEGER'],
    ['tokens_in', 'INTEGER'],
    ['tokens_out', 'INTEGER'],
    ['earnings', 'REAL'],
    ...extra,
  ];
  return `CREATE TABLE ${name} (
          ${columns.map(([c, t]) => `${c} ${t} NOT NULL,`).join('\n          ')}
          PRIMARY KEY (${key}, model)
        ) WITHOUT ROWID;`;
}

export const migrations: readonly Migration[] = [
  {
    version: 1,
    name: 'usage records',
    up(db) {
      db.exec(`
        CREATE TABLE usage (
          id                INTEGER PRIMARY KEY,
          request_id        TEXT    NOT NULL,
          source            TEXT    NOT NULL,
          model             TEXT    NOT NULL,
          endpoint          TEXT    NOT NULL,
          started_at        INTEGER NOT NULL,
          finished_at       INTEGER NOT NULL,
          tokens_in         INTEGER NOT NULL,
          tokens_out        INTEGER NOT NULL,
          estimated         INTEGER NOT NULL,
          latency_ms        REAL    NOT NULL,
          ttft_ms           REAL,
          tokens_per_second REAL,
          status            TEXT    NOT NULL,
          status_code       INTEGER,
          error             TEXT
        );
        CREATE INDEX usage_finished ON usage (finished_at);
      `);
    },
  },
  {
    version: 2,
    name: 'prices and earnings',
    up(db) {
      db.exec(`
        CREATE TABLE prices (
          id             INTEGER PRIMARY KEY,
          model          TEXT    NOT NULL,
          input_per_m    REAL    NOT NULL,
          output_per_m   REAL    NOT NULL,
          effective_from INTEGER NOT NULL,
          created_at     INTEGER NOT NULL
        );
        CREATE INDEX prices_model ON prices (model, effective_from);
        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        ALTER TABLE usage ADD COLUMN earnings REAL NOT NULL DEFAULT 0;
        ALTER TABLE usage ADD COLUMN price_id INTEGER REFERENCES prices (id);
      `);
    },
  },
  {
    version: 3,
    name: '15-minute rollups and per-model percentile index',
    up(db) {
      // One row per (15-minute bucket, model), kept current by a trigger on insert. Rows leave the
      // ledger only through prune(), which cuts at a bucket edge and deletes the rollups itself,
      // so there is deliberately no delete trigger.
      db.exec(`
        ${rollupTable('usage_15m', 'bucket')}
        CREATE TRIGGER usage_rollup AFTER INSERT ON usage BEGIN
          INSERT INTO usage_15m (bucket, model, requests, errors, tokens_in, tokens_out, earnings)
          VALUES (NEW.finished_at - NEW.finished_at % ${ROLLUP_MS}, NEW.model, 1,
                  NEW.status IN ('error', 'rejected'), NEW.tokens_in, NEW.tokens_out, NEW.earnings)
          ON CONFLICT (bucket, model) DO UPDATE SET
            requests   = requests + 1,
            errors     = errors + excluded.errors,
            tokens_in  = tokens_in + excluded.tokens_in,
            tokens_out = tokens_out + excluded.tokens_out,
            earnings   = earnings + excluded.earnings;
        END;
        CREATE INDEX usage_15m_model ON usage_15m (model, bucket, requests, errors, tokens_in, tokens_out, earnings);
        INSERT INTO usage_15m (bucket, model, requests, errors, tokens_in, tokens_out, earnings)
          SELECT finished_at - finished_at % ${ROLLUP_MS}, model, count(*),
                 sum(status IN ('error', 'rejected')), sum(tokens_in), sum(tokens_out), sum(earnings)
          FROM usage GROUP BY 1, 2;
        -- Percentiles read one model's successful requests in a time range: this index holds
        -- exactly those entries side by side, with the values, so the table is never touched.
        CREATE INDEX usage_model_perf ON usage (model, status, finished_at, latency_ms, tokens_per_second);
      `);
    },
  },
  {
    version: 4,
    name: 'rate used per row, power cost, delivery to the hub',
    up(db) {
      // rate_*: the payout rate the row earned at (USD per 1M tokens) and where it came from
      // ('network' = the platform's model-demand rates, 'override' = the owner's own price for a
      // model the network does not price). energy_wh: GPU energy attributed to the request (NULL:
      // no power samples covered it); cost: that energy at the owner's electricity price, in USD
      // (NULL: no price set). delivered: 0 while the request's last message (stream_end / result)
      // has not been handed to the hub link — the row is written before it is sent.
      db.exec(`
        ALTER TABLE usage ADD COLUMN rate_in REAL;
        ALTER TABLE usage ADD COLUMN rate_out REAL;
        ALTER TABLE usage ADD COLUMN rate_source TEXT;
        ALTER TABLE usage ADD COLUMN energy_wh REAL;
        ALTER TABLE usage ADD COLUMN cost REAL;
        ALTER TABLE usage ADD COLUMN delivered INTEGER NOT NULL DEFAULT 1;
        UPDATE usage SET rate_in = (SELECT input_per_m FROM prices p WHERE p.id = usage.price_id),
                         rate_out = (SELECT output_per_m FROM prices p WHERE p.id = usage.price_id),
                         rate_source = 'override'
          WHERE price_id IS NOT NULL;
        CREATE INDEX usage_undelivered ON usage (finished_at) WHERE delivered = 0;
        ALTER TABLE usage_15m ADD COLUMN hub_requests INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage_15m ADD COLUMN hub_errors INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage_15m ADD COLUMN hub_tokens_in INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage_15m ADD COLUMN hub_tokens_out INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE usage_15m ADD COLUMN energy_wh REAL NOT NULL DEFAULT 0;
        ALTER TABLE usage_15m ADD COLUMN cost REAL NOT NULL DEFAULT 0;
        DROP INDEX usage_15m_model;
        CREATE INDEX usage_15m_model ON usage_15m (model, bucket, requests, errors, tokens_in, tokens_out, earnings, energy_wh, cost);
        DROP TRIGGER usage_rollup;
        CREATE TRIGGER usage_rollup AFTER INSERT ON usage BEGIN
          ${rollupUpsert('usage_15m', 'bucket', ROLLUP_MS, true)}
        END;
        UPDATE usage_15m SET (hub_requests, hub_errors, hub_tokens_in, hub_tokens_out) = (
          SELECT count(*), coalesce(sum(status IN ('error', 'rejected')), 0), coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0)
          FROM usage u WHERE u.source = 'hub' AND u.model = usage_15m.model
            AND u.finished_at >= usage_15m.bucket AND u.finished_at < usage_15m.bucket + ${ROLLUP_MS});
      `);
    },
  },
  {
    version: 5,
    name: 'daily rollups for long ranges',
    up(db) {
      // The sums over long ranges (30 and 365 days, the lifetime comparison) read one row per UTC day
      // and model instead of 96: usage_1d, kept by the same insert trigger. A UTC day is a whole number
      // of 15-minute buckets, so queries take whole days from usage_1d, whole buckets at the range's
      // edges from usage_15m and raw rows only inside partial buckets (queries.ts). To keep inserts as
      // cheap as v4's: the per-model covering index on usage_15m goes (it held every summed column, so
      // every insert rewrote an entry; per-model sums now read under two days of usage_15m rows by
      // key), and usage_15m loses v4's hub-only columns (only the lifetime comparison reads them,
      // from usage_1d now). The table is rebuilt for that in one pass.
      db.exec(`
        DROP TRIGGER usage_rollup;
        DROP INDEX usage_15m_model;
        ${rollupTable('usage_1d', 'day', [
          ['hub_requests', 'INTEGER'],
          ['hub_errors', 'INTEGER'],
          ['hub_tokens_in', 'INTEGER'],
          ['hub_tokens_out', 'INTEGER'],
          ['energy_wh', 'REAL'],
          ['cost', 'REAL'],
        ])}
        INSERT INTO usage_1d (day, model, requests, errors, tokens_in, tokens_out, earnings,
                              hub_requests, hub_errors, hub_tokens_in, hub_tokens_out, energy_wh, cost)
          SELECT bucket - bucket % ${ROLLUP_DAY_MS}, model, sum(requests), sum(errors), sum(tokens_in), sum(tokens_out), sum(earnings),
                 sum(hub_requests), sum(hub_errors), sum(hub_tokens_in), sum(hub_tokens_out), sum(energy_wh), sum(cost)
          FROM usage_15m GROUP BY 1, 2;
        ${rollupTable('usage_15m_v5', 'bucket', [
          ['energy_wh', 'REAL'],
          ['cost', 'REAL'],
        ])}
        INSERT INTO usage_15m_v5 SELECT bucket, model, requests, errors, tokens_in, tokens_out, earnings, energy_wh, cost FROM usage_15m;
        DROP TABLE usage_15m;
        ALTER TABLE usage_15m_v5 RENAME TO usage_15m;
        CREATE TRIGGER usage_rollup AFTER INSERT ON usage BEGIN
          ${rollupUpsert('usage_15m', 'bucket', ROLLUP_MS, false)}
          ${rollupUpsert('usage_1d', 'day', ROLLUP_DAY_MS, true)}
        END;
      `);
    },
  },
  {
    version: 6,
    name: 'summaries kept as rows are written: CSV lines, latency and speed bins',
    up(db, progress) {
      // usage_csv and the perf bins (summaries.ts): written with each row from now on (the writer makes the
      // line, a trigger the bins), made here once for the rows already in the file.
      db.exec(CSV_TABLE_SQL);
      backfillCsv(db, progress);
      db.exec(PERF_TABLES_SQL);
      const all = { from: 0, to: Number.MAX_SAFE_INTEGER };
      db.prepare(perfFromRowsSql('usage_perf_1d')).run(all);
      db.prepare(perfFromRowsSql('usage_perf_16d')).run(all);
    },
  },
  {
    version: 7,
    name: "the guard rails' and pause controller's decisions",
    up(db) {
      // One row per decision (rail-events.ts): `rail` is what it acts on ('pause', 'throttle', or 'all' for the
      // agent's start, which ends every span left open), `active` 1 when it starts a span of its (rail, cause),
      // 0 when it ends one. Spans are derived from these rows; nothing else is kept.
      db.exec(`
        CREATE TABLE rail_events (
          id      INTEGER PRIMARY KEY,
          at      INTEGER NOT NULL,
          code    TEXT NOT NULL,
          rail    TEXT NOT NULL,
          cause   TEXT NOT NULL,
          active  INTEGER NOT NULL,
          gpu     INTEGER,
          detail  TEXT NOT NULL
        );
        CREATE INDEX rail_events_at ON rail_events (at);
      `);
    },
  },
];

/** Rows formatted and written per statement batch when the CSV lines of an existing ledger are made. */
const CSV_BACKFILL_PAGE = 10_000;

/** v6: each existing row's CSV line, made the way the writer makes a new row's (csvLine). */
function backfillCsv(db: Db, progress: (line: string) => void): void {
  const total = (db.prepare('SELECT count(*) FROM usage').pluck().get() as number) ?? 0;
  if (total === 0) return;
  progress(`Usage database: making the CSV lines of ${total} records (once, for fast exports)…`);
  const page = db.prepare(`${CSV_SELECT} WHERE u.id > ? ORDER BY u.id LIMIT ${CSV_BACKFILL_PAGE}`).raw(true);
  const insert = db.prepare('INSERT INTO usage_csv (finished_at, id, line) VALUES (?, ?, ?)');
  for (let after = 0; ;) {
    const rows = page.all(after) as CsvRaw[];
    for (const raw of rows) {
      const row = csvRowOf(raw);
      insert.run(row.finished_at, row.id, csvLine(row));
    }
    if (rows.length < CSV_BACKFILL_PAGE) break;
    after = rows[rows.length - 1]![0];
  }
}

export const LATEST_VERSION = migrations[migrations.length - 1]!.version;

/** The version the file is at (0 for a new, empty database). */
export function schemaVersion(db: Db): number {
  const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (!table) return 0;
  const row = db.prepare('SELECT max(version) AS v FROM schema_version').get() as { v: number | null };
  return row.v ?? 0;
}

export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `The usage database was written by a newer version of Swan Provider Console (schema v${found}; this version knows up to v${known}). ` +
        'Update the console to keep recording usage; records are held in memory until then.',
    );
    this.name = 'SchemaTooNewError';
  }
}

/**
 * Brings the database up to `target` (default: the latest step). Returns the versions applied.
 * Throws SchemaTooNewError when the file is ahead of this code.
 */
export function migrate(
  db: Db,
  target: number = LATEST_VERSION,
  steps: readonly Migration[] = migrations,
  progress: (line: string) => void = () => undefined,
): number[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  const current = schemaVersion(db);
  const known = steps[steps.length - 1]?.version ?? 0;
  if (current > known) throw new SchemaTooNewError(current, known);
  const applied: number[] = [];
  const mark = db.prepare('INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)');
  for (const step of steps) {
    if (step.version <= current || step.version > target) continue;
    // Read the version again under the write lock: another process (the CLI beside the agent)
    // may have applied this step since we looked.
    const ran = db
      .transaction(() => {
        if (schemaVersion(db) >= step.version) return false;
        step.up(db, progress);
        mark.run(step.version, step.name, Date.now());
        return true;
      })
      .immediate();
    if (ran) applied.push(step.version);
  }
  return applied;
}
