import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/log';
import { Ledger } from '../../../src/core/ledger/ledger';
import { LATEST_VERSION, migrate, migrations, schemaVersion, type Migration } from '../../../src/core/ledger/migrations';
import { rec, tempDir } from '../../support/ledger/helpers';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const T = Date.UTC(2025, 1, 3, 10, 0);

describe('schema migrations', () => {
  it('steps are numbered 1, 2, 3 … without gaps', () => {
    expect(migrations.map((m) => m.version)).toEqual(Array.from({ length: migrations.length }, (_, i) => i + 1));
    expect(LATEST_VERSION).toBe(migrations.length);
  });

  it('upgrades a v1 database to the latest, keeping its records and rolling them up', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const v1 = new Database(file);
    expect(migrate(v1, 1)).toEqual([1]);
    const insert = v1.prepare(
      `INSERT INTO usage (request_id, source, model, endpoint, started_at, finished_at, tokens_in, tokens_out, estimated, latency_ms, ttft_ms, tokens_per_second, status, status_code, error)
       VALUES (?, 'hub', ?, 'http://127.0.0.1:8000', ?, ?, ?, ?, 0, ?, NULL, NULL, ?, 200, NULL)`,
    );
    insert.run('old-1', 'm', T - 500, T, 10, 20, 500, 'ok');
    insert.run('old-2', 'm', T + 60_000, T + 61_000, 1, 2, 1000, 'error');
    insert.run('old-3', 'n', T + 1_800_000, T + 1_800_000, 5, 5, 7, 'ok');
    v1.close();

    const log = memoryLog();
    const ledger = Ledger.open(file, { log: log.child('ledger') });
    try {
      expect(ledger.health().ok).toBe(true);
      expect(log.entries().map((e) => e.msg).join('\n')).toContain(`upgraded to schema v${LATEST_VERSION}`);
      expect(ledger.recent(10).map((r) => r.requestId).sort()).toEqual(['old-1', 'old-2', 'old-3']);
      // Whole 15-minute buckets are read from the rollups, so this proves they were backfilled.
      expect(ledger.totals(T, T + 3_600_000)).toEqual({ requests: 3, errors: 1, tokensIn: 16, tokensOut: 27, earnings: 0, energyWh: 0, cost: 0 });
      const r = ledger.report(T, T + 3_600_000, '15m');
      expect(r.perModel.map((m) => [m.model, m.requests, m.p50LatencyMs])).toEqual([
        ['m', 2, 500],
        ['n', 1, 7],
      ]);
      // The upgraded file works like a new one.
      ledger.setPrice('*', 1, 1, 0);
      ledger.record(rec(T + 10, { tokensIn: 1_000_000, tokensOut: 0 }));
      expect(ledger.totals(T, T + 3_600_000)).toMatchObject({ requests: 4, earnings: 1 });
    } finally {
      ledger.close();
    }
    const db = new Database(file, { readonly: true });
    try {
      expect(schemaVersion(db)).toBe(LATEST_VERSION);
      expect(db.prepare('SELECT version FROM schema_version ORDER BY version').pluck().all()).toEqual(migrations.map((m) => m.version));
    } finally {
      db.close();
    }
  });

  it('a failing step leaves the database at the previous version, untouched', () => {
    const db = new Database(path.join(dir, 'x.sqlite'));
    try {
      const steps: Migration[] = [
        migrations[0]!,
        {
          version: 2,
          name: 'breaks half-way',
          up(d) {
            d.exec('CREATE TABLE half (x)');
            throw new Error('boom');
          },
        },
      ];
      expect(() => migrate(db, 2, steps)).toThrow('boom');
      expect(schemaVersion(db)).toBe(1);
      expect(db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'half'").pluck().get()).toBe(0);
      expect(migrate(db)).toEqual(migrations.slice(1).map((m) => m.version));
      expect(migrate(db)).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('a database from a newer version is reported clearly and records are held, not lost', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const db = new Database(file);
    migrate(db);
    db.prepare("INSERT INTO schema_version (version, name, applied_at) VALUES (?, 'from the future', 0)").run(LATEST_VERSION + 1);
    db.close();
    const ledger = Ledger.open(file, { retryMinMs: 60_000 });
    try {
      const h = ledger.health();
      expect(h.ok).toBe(false);
      expect(h.error).toMatch(/newer version of Swan Provider Console.*Update the console/);
      expect(() => ledger.record(rec(T))).not.toThrow();
      expect(ledger.health().pending).toBe(1);
    } finally {
      ledger.close();
    }
  });
});
