// The database misbehaves; the agent must not notice beyond a clear message: record() never
// throws, records wait in memory (bounded) and reach the file once it works again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog, type AgentLog } from '../../../src/core/base/log';
import { LedgerUnavailableError } from '../../../src/core/ledger/db-errors';
import { Ledger, type LedgerOptions } from '../../../src/core/ledger/ledger';
import { rec, tempDir, waitForHealth } from '../../support/ledger/helpers';

let dir: string;
let cleanup: () => void;
let file: string;
let log: AgentLog;
const toClose: Array<{ close(): unknown }> = [];

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
  file = path.join(dir, 'ledger.sqlite');
  log = memoryLog();
});
afterEach(() => {
  for (const c of toClose.splice(0).reverse()) c.close();
  cleanup();
});

/** Fast retries so the tests wait milliseconds, not seconds. */
function openLedger(opts: LedgerOptions = {}): Ledger {
  const l = Ledger.open(file, { log: log.child('ledger'), busyTimeoutMs: 20, retryMinMs: 10, retryMaxMs: 50, ...opts });
  toClose.push(l);
  return l;
}

function ids(l: Ledger): string[] {
  return l
    .recent(10_000)
    .map((r) => r.requestId)
    .sort();
}

function errors(): string {
  return log
    .entries(100, 'error')
    .map((e) => e.msg)
    .join('\n');
}

const T = Date.UTC(2025, 6, 1);

describe('a corrupt database file', () => {
  beforeEach(() => {
    const good = Ledger.open(file);
    good.record(rec(T, { requestId: 'before' }));
    good.close();
    fs.writeFileSync(file, crypto.randomBytes(16_384));
  });

  it('is reported clearly; records are held; moving the file aside brings a fresh database that receives them', async () => {
    const l = openLedger();
    const h = l.health();
    expect(h.ok).toBe(false);
    expect(h.error).toContain(file);
    expect(h.error).toMatch(/damaged .*keeps serving.*Move the file aside/);
    expect(errors()).toMatch(/damaged/);

    expect(() => {
      l.record(rec(T + 1, { requestId: 'held-1' }));
      l.record(rec(T + 2, { requestId: 'held-2' }));
    }).not.toThrow();
    expect(l.health()).toMatchObject({ ok: false, pending: 2, dropped: 0 });
    expect(() => l.totals(0, T + 10)).toThrow(LedgerUnavailableError);
    expect(() => l.report(0, T + 10, 'day')).toThrow(expect.objectContaining({ code: 'corrupt' }));
    expect(l.today()).toEqual({ requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0, energyWh: 0, cost: 0 });

    fs.renameSync(file, `${file}.damaged`);
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toEqual(['held-1', 'held-2']);
    expect(
      log
        .entries(100, 'info')
        .map((e) => e.msg)
        .join('\n'),
    ).toMatch(/working again; wrote 2 held records/);
  });

  it('replaced by a good copy: the held records are written into it', async () => {
    const l = openLedger();
    l.record(rec(T + 1, { requestId: 'held' }));
    const other = path.join(dir, 'backup.sqlite');
    const backup = Ledger.open(other);
    backup.record(rec(T, { requestId: 'from-backup' }));
    backup.close();
    fs.copyFileSync(other, file);
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toEqual(['from-backup', 'held']);
  });
});

describe('a locked database (another program holds an exclusive transaction)', () => {
  it('holds records while locked and writes them when the lock is released', async () => {
    // A lock wait long enough that records which waited on it again could not pass for ones that did not.
    const busyTimeoutMs = 1000;
    const l = openLedger({ busyTimeoutMs });
    l.record(rec(T, { requestId: 'first' }));
    const other = new Database(file);
    toClose.push(other);
    other.exec('BEGIN EXCLUSIVE');

    expect(() => l.record(rec(T + 1, { requestId: 'during-1' }))).not.toThrow();
    const h = l.health();
    expect(h).toMatchObject({ ok: false, pending: 1 });
    expect(h.error).toMatch(/locked by another program.*written as soon as it is free/);
    // While held, later records queue behind without waiting on the lock again: 19 of them take less than
    // one lock wait (19 waits would take 19 s).
    const t0 = performance.now();
    for (let i = 2; i <= 20; i++) l.record(rec(T + i, { requestId: `during-${i}` }));
    expect(performance.now() - t0).toBeLessThan(busyTimeoutMs);
    expect(l.health().pending).toBe(20);
    // Readers are not blocked by a writer in WAL mode.
    expect(l.totals(0, T + 100).requests).toBe(1);

    other.exec('COMMIT');
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toHaveLength(21);
    expect(l.totals(0, T + 100).requests).toBe(21);
  });

  it('keeps at most maxPending records, drops the oldest, counts and logs them', async () => {
    const l = openLedger({ maxPending: 3 });
    const other = new Database(file);
    toClose.push(other);
    other.exec('BEGIN EXCLUSIVE');
    for (let i = 1; i <= 5; i++) l.record(rec(T + i, { requestId: `r${i}` }));
    expect(l.health()).toMatchObject({ ok: false, pending: 3, dropped: 2 });
    // Logged at the first drop, then at most every 10 s (the recovery message gives the total).
    expect(errors()).toMatch(/Usage records are being lost: 3 are already held in memory, so the oldest are dropped \(1 so far\)/);
    other.exec('COMMIT');
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toEqual(['r3', 'r4', 'r5']);
    expect(l.health().dropped).toBe(2);
    expect(
      log
        .entries(100, 'info')
        .map((e) => e.msg)
        .join('\n'),
    ).toMatch(/2 records were dropped while it was away/);
  });

  it('close() while still locked says how many records are lost', () => {
    const l = Ledger.open(file, { log: log.child('ledger'), busyTimeoutMs: 20, retryMinMs: 60_000 });
    const other = new Database(file);
    toClose.push(other);
    other.exec('BEGIN EXCLUSIVE');
    l.record(rec(T));
    l.close();
    expect(errors()).toMatch(/closed with 1 usage records it could not write/);
  });
});

describe('a folder that cannot hold the database', () => {
  it('is reported with what to check, and recovers once the path works', async () => {
    const blocker = path.join(dir, 'not-a-folder');
    fs.writeFileSync(blocker, 'a file where a folder should be');
    file = path.join(blocker, 'ledger.sqlite');
    const l = openLedger();
    expect(l.health().error).toMatch(/cannot be opened or written .*Check that its folder exists/);
    l.record(rec(T, { requestId: 'held' }));
    fs.rmSync(blocker);
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toEqual(['held']);
  });
});

describe('damage found while running (pages inside the file overwritten)', () => {
  it('a query that hits it reports it, records are held, and the file is not trusted again until replaced', async () => {
    const good = Ledger.open(file);
    good.recordBatch(Array.from({ length: 20_000 }, (_, i) => rec(T + i * 1000, { requestId: `r${i}`, error: null })));
    good.close();
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, Buffer.alloc(Math.floor(size * 0.5), 0xa5), 0, Math.floor(size * 0.5), Math.floor(size * 0.4));
    fs.closeSync(fd);

    const l = openLedger();
    expect(() => l.exportCsv(0, T + 30_000_000)).toThrow(expect.objectContaining({ code: 'corrupt' }));
    expect(l.health()).toMatchObject({ ok: false });
    l.record(rec(T, { requestId: 'held' }));
    expect(l.health().pending).toBe(1);
    // The retries reopen the file but its pages fail the check: it stays reported, the record stays held.
    await waitForHealth(l, () => log.entries(200).some((e) => /integrity check failed/.test(e.msg)));
    expect(l.health()).toMatchObject({ ok: false, pending: 1 });

    fs.renameSync(file, `${file}.damaged`);
    await waitForHealth(l, (x) => x.ok && x.pending === 0);
    expect(ids(l)).toEqual(['held']);
  });
});
