import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { Ledger } from '../../../src/core/ledger/ledger';
import { LATEST_VERSION, migrate, migrations, schemaVersion, type Migration } from '../../../src/core/ledger/migrations';
import { rec, tempDir } from '../../support/ledger/helpers';
import { rollupDrift } from '../../support/ledger/rollups';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const T = Date.UTC(2025, 1, 3, 10, 0);
const DAY = 86_400_000;

describe('schema migrations', () => {
  it('steps are numbered 1, 2, 3 … without gaps', () => {
    expect(migrations.map((m) => m.version)).toEqual(Array.from({ length: migrations.length }, (_, i) => i + 1));
    expect(LATEST_VERSION).toBe(migrations.length);
  });

  it('a new file is created at the latest schema, and the log says created, not upgraded', () => {
    const log = memoryLog();
    const ledger = Ledger.open(path.join(dir, 'ledger.sqlite'), { log: log.child('ledger') });
    try {
      const lines = log
        .entries()
        .map((e) => e.msg)
        .join('\n');
      expect(lines).toContain(`created (schema v${LATEST_VERSION})`);
      expect(lines).not.toContain('upgraded');
    } finally {
      ledger.close();
    }
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
      expect(
        log
          .entries()
          .map((e) => e.msg)
          .join('\n'),
      ).toContain(`upgraded to schema v${LATEST_VERSION}`);
      expect(
        ledger
          .recent(10)
          .map((r) => r.requestId)
          .sort(),
      ).toEqual(['old-1', 'old-2', 'old-3']);
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

  it('upgrades a v4 file with a year of rows to v5: every query answers what the rows say, before and after new records and a prune', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const v4 = new Database(file);
    expect(migrate(v4, 4)).toEqual([1, 2, 3, 4]);
    const insert = v4.prepare(
      `INSERT INTO usage (request_id, source, model, endpoint, started_at, finished_at, tokens_in, tokens_out, estimated, latency_ms, ttft_ms, tokens_per_second,
                          status, status_code, error, earnings, rate_in, rate_out, rate_source, energy_wh, cost, delivered)
       VALUES (?, ?, ?, 'http://127.0.0.1:8000', ?, ?, ?, ?, 0, ?, 50, ?, ?, 200, NULL, ?, 0.1, 0.3, 'network', ?, ?, 1)`,
    );
    let s = 11;
    const rand = (): number => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    const year0 = Date.UTC(2025, 0, 1);
    const times: number[] = [];
    for (let i = 0; i < 6000; i++) times.push(year0 + Math.floor(rand() * 400 * DAY));
    // On UTC day and 15-minute edges, and one millisecond before them.
    for (let d = 0; d < 40; d++) times.push(year0 + d * 10 * DAY, year0 + d * 10 * DAY - 1, year0 + d * 10 * DAY + 900_000 * (d + 1));
    const statuses = ['ok', 'ok', 'ok', 'error', 'rejected', 'cancelled'];
    v4.transaction(() => {
      times.forEach((t, i) => {
        const status = statuses[Math.floor(rand() * statuses.length)]!;
        const energy = rand() < 0.3 ? null : Math.floor(rand() * 80) / 8;
        insert.run(
          `v4-${i}`,
          rand() < 0.7 ? 'hub' : 'local',
          ['m', 'n', 'o'][Math.floor(rand() * 3)]!,
          t - 700,
          t,
          Math.floor(rand() * 2000),
          Math.floor(rand() * 900),
          700,
          40,
          status,
          status === 'ok' ? Math.floor(rand() * 64) / 8 : 0,
          energy,
          energy === null || rand() < 0.2 ? null : energy / 8,
        );
      });
    })();
    expect(rollupDrift(v4)).toEqual([]);
    v4.close();

    const now = year0 + 400 * DAY + 3_600_000;
    const ledger = Ledger.open(file, { now: () => now });
    const truthDb = new Database(file, { readonly: true });
    const truth = truthDb.prepare(
      `SELECT count(*) AS requests, coalesce(sum(status IN ('error', 'rejected')), 0) AS errors, coalesce(sum(tokens_in), 0) AS tokensIn,
              coalesce(sum(tokens_out), 0) AS tokensOut, coalesce(sum(earnings), 0) AS earnings, coalesce(sum(energy_wh), 0) AS energyWh, coalesce(sum(cost), 0) AS cost
       FROM usage WHERE finished_at >= ? AND finished_at < ?`,
    );
    const truthByModel = truthDb.prepare(
      `SELECT model, count(*) AS requests, sum(status IN ('error', 'rejected')) AS errors, sum(tokens_in) AS tokensIn, sum(tokens_out) AS tokensOut, sum(earnings) AS earnings
       FROM usage WHERE finished_at >= ? AND finished_at < ? GROUP BY model ORDER BY model`,
    );
    const hubTruth = truthDb.prepare(
      `SELECT count(*) AS requests, sum(status IN ('error', 'rejected')) AS failed, sum(tokens_in) AS tokensIn, sum(tokens_out) AS tokensOut, min(finished_at) AS firstAt
       FROM usage WHERE source = 'hub'`,
    );
    const ranges: Array<[number, number]> = [
      [0, now + 1],
      [year0, year0 + DAY],
      [year0 - 1, year0 + 10 * DAY + 1],
      [year0 + 900_000, year0 + 365 * DAY],
      [now - 30 * DAY, now + 1],
      [now - 365 * DAY, now + 1],
      [year0 + 5 * DAY + 123, year0 + 6 * DAY + 456],
    ];
    for (let k = 0; k < 40; k++) {
      const from = year0 + Math.floor(rand() * 400 * DAY);
      ranges.push([from, from + Math.floor(rand() * (k % 2 ? 3 * DAY : 120 * DAY))]);
    }
    // Counts exactly; money and energy to 1e-9 (the rollups add in insert order, the truth in its own).
    const exact = <T extends object>(o: T): T =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' && !Number.isInteger(v) ? Math.round(v * 1e9) / 1e9 : v])) as T;
    const check = (when: string): void => {
      for (const [from, to] of ranges) {
        const what = `${when}, [${from}, ${to})`;
        expect(exact(ledger.totals(from, to)), what).toEqual(exact(truth.get(from, to) as object));
        const perModel = ledger
          .report(from, to, 'day')
          .perModel.map((m) =>
            exact({ model: m.model, requests: m.requests, errors: m.errors, tokensIn: m.tokensIn, tokensOut: m.tokensOut, earnings: m.earnings }),
          )
          .sort((a, b) => a.model.localeCompare(b.model));
        expect(perModel, what).toEqual((truthByModel.all(from, to) as object[]).map(exact));
      }
      const h = ledger.hubLifetime();
      expect({ requests: h.requests, failed: h.failed, tokensIn: h.tokensIn, tokensOut: h.tokensOut, firstAt: h.firstAt }, when).toEqual(hubTruth.get());
      expect(rollupDrift(truthDb), when).toEqual([]);
    };
    try {
      expect(schemaVersion(truthDb)).toBe(LATEST_VERSION);
      expect(truthDb.prepare('SELECT count(*) FROM usage_1d').pluck().get()).toBeGreaterThan(0);
      check('after the upgrade');
      // New records go to both rollups.
      ledger.setPrice('*', 1, 2, 0);
      ledger.recordBatch(
        Array.from({ length: 500 }, (_, i) => rec(year0 + i * 3 * 3_600_000 + 17, { model: ['m', 'p'][i % 2]!, source: i % 3 ? 'hub' : 'local' })),
      );
      ledger.record(rec(now - 5, { model: 'n' }));
      check('after new records');
      // A prune that cuts a UTC day part-way (now is 01:00 UTC; 100 days back is the same hour).
      expect(ledger.prune(100)).toBeGreaterThan(0);
      check('after a prune');
    } finally {
      truthDb.close();
      ledger.close();
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
