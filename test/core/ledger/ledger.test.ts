import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { Ledger } from '../../../src/core/ledger/ledger';
import { DAY_MS } from '../../../src/core/ledger/time-buckets';
import { rec, tempDir } from '../../support/ledger/helpers';
import { rollupDrift } from '../../support/ledger/rollups';

let dir: string;
let cleanup: () => void;
const open: Ledger[] = [];
function openLedger(file = path.join(dir, 'ledger.sqlite'), opts: Parameters<typeof Ledger.open>[1] = {}): Ledger {
  const l = Ledger.open(file, opts);
  open.push(l);
  return l;
}

beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => {
  for (const l of open.splice(0)) l.close();
  cleanup();
});

const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);

describe('Ledger: record and read back', () => {
  it('stores every field of a record and reads it back unchanged', () => {
    const l = openLedger();
    const a = rec(T0, { requestId: 'hub-1', estimated: true, ttftMs: null, tokensPerSecond: null, statusCode: null });
    const b = rec(T0 + 1, { requestId: 'loc-2', source: 'local', model: 'qwen', status: 'error', statusCode: 502, error: 'engine went away' });
    l.record(a);
    l.record(b);
    expect(l.recent(10)).toEqual([b, a]);
    expect(l.health()).toEqual({ ok: true, pending: 0, dropped: 0, invalid: 0 });
  });

  it('keeps records across close and reopen', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file);
    l.record(rec(T0, { requestId: 'kept' }));
    l.close();
    const again = openLedger(file);
    expect(again.recent(5).map((r) => r.requestId)).toEqual(['kept']);
  });

  it('creates its folder and uses WAL', () => {
    const file = path.join(dir, 'a', 'b', 'ledger.sqlite');
    openLedger(file).record(rec(T0));
    const other = new Database(file, { readonly: true });
    try {
      expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      other.close();
    }
  });

  it('refuses a malformed record without throwing, counts and logs it', () => {
    const log = memoryLog();
    const l = openLedger(undefined, { log: log.child('ledger') });
    expect(() => l.record({ ...rec(T0), tokensOut: -3 })).not.toThrow();
    expect(() => l.record({ ...rec(T0), model: '' })).not.toThrow();
    expect(() => l.record(null as never)).not.toThrow();
    expect(l.health()).toMatchObject({ ok: true, invalid: 3, pending: 0 });
    expect(l.recent(10)).toEqual([]);
    expect(
      log
        .entries(10, 'error')
        .map((e) => e.msg)
        .join('\n'),
    ).toMatch(/tokensOut: .*not stored/);
  });

  it('cuts very long error texts', () => {
    const l = openLedger();
    l.record(rec(T0, { status: 'error', error: 'x'.repeat(10_000) }));
    expect(l.recent(1)[0]!.error!.length).toBeLessThanOrEqual(2001);
  });

  it('counts a record that arrives after close as dropped, without throwing', () => {
    const l = Ledger.open(path.join(dir, 'ledger.sqlite'));
    l.close();
    expect(() => l.record(rec(T0))).not.toThrow();
    expect(l.health()).toMatchObject({ ok: false, dropped: 1 });
  });

  it('recent() is newest first and honours the limit', () => {
    const l = openLedger();
    for (let i = 0; i < 20; i++) l.record(rec(T0 + i * 1000, { requestId: `r${i}` }));
    expect(l.recent(3).map((r) => r.requestId)).toEqual(['r19', 'r18', 'r17']);
  });

  it('recordBatch writes all valid records in one go', () => {
    const l = openLedger();
    l.recordBatch([rec(T0), rec(T0 + 1), { ...rec(T0 + 2), status: 'weird' as never }]);
    expect(l.totals(0, T0 + 10).requests).toBe(2);
    expect(l.health().invalid).toBe(1);
  });
});

describe('Ledger: totals', () => {
  it('counts requests, errors (error and rejected), tokens; ranges are [from, to)', () => {
    const l = openLedger();
    l.record(rec(T0, { tokensIn: 10, tokensOut: 1 }));
    l.record(rec(T0 + 1, { status: 'error', tokensIn: 20, tokensOut: 2 }));
    l.record(rec(T0 + 2, { status: 'rejected', tokensIn: 0, tokensOut: 0 }));
    l.record(rec(T0 + 3, { status: 'cancelled', tokensIn: 40, tokensOut: 4 }));
    expect(l.totals(T0, T0 + 4)).toEqual({ requests: 4, errors: 2, tokensIn: 70, tokensOut: 7, earnings: 0, energyWh: 0, cost: 0 });
    expect(l.totals(T0 + 1, T0 + 3)).toMatchObject({ requests: 2, errors: 2 });
    expect(l.totals(T0 + 4, T0 + 4)).toMatchObject({ requests: 0 });
    expect(() => l.totals(T0 + 5, T0)).toThrow(expect.objectContaining({ code: 'range_reversed', field: 'to' }));
  });

  it('today() starts at local midnight and last(n) covers n × 24 h up to now', () => {
    const now = new Date(2025, 5, 10, 9, 30).getTime();
    const l = openLedger(undefined, { now: () => now });
    const midnight = new Date(2025, 5, 10).getTime();
    l.record(rec(midnight - 1));
    l.record(rec(midnight));
    l.record(rec(now));
    l.record(rec(now - 7 * DAY_MS - 1));
    l.record(rec(now - 7 * DAY_MS));
    expect(l.today().requests).toBe(2);
    expect(l.last(1).requests).toBe(3);
    expect(l.last(7).requests).toBe(4);
    expect(l.last(30).requests).toBe(5);
  });
});

describe('Ledger: prune', () => {
  it('deletes records older than the retention at a 15-minute edge and keeps sums exact', () => {
    const now = Date.UTC(2025, 5, 30, 12, 7);
    const l = openLedger(undefined, { now: () => now });
    const cutoff = Date.UTC(2025, 5, 20, 12, 0); // now - 10 days, floored to 15 minutes
    // More than one prune step (20,000 records each) before the cutoff.
    l.recordBatch(Array.from({ length: 45_000 }, (_, i) => rec(cutoff - 40 * DAY_MS + i * 60_000)));
    l.record(rec(cutoff - 1, { requestId: 'old' }));
    l.record(rec(cutoff, { requestId: 'edge' }));
    l.record(rec(now, { requestId: 'new' }));
    expect(l.prune(0)).toBe(0);
    const before = l.totals(0, now + 1).requests;
    const deleted = l.prune(10);
    const left = l.recent(10_000).map((r) => r.requestId);
    expect(left).toContain('edge');
    expect(left).toContain('new');
    expect(left).not.toContain('old');
    expect(l.totals(0, now + 1).requests).toBe(before - deleted);
    expect(l.totals(0, now + 1).requests).toBe(left.length);
    expect(l.totals(0, cutoff).requests).toBe(0);
    // The cutoff is mid-day: the daily rollup of that day now holds only what is left of it.
    const db = new Database(path.join(dir, 'ledger.sqlite'), { readonly: true });
    try {
      expect(rollupDrift(db)).toEqual([]);
      expect(
        db
          .prepare('SELECT count(*) FROM usage_1d WHERE day < ?')
          .pluck()
          .get(cutoff - (cutoff % DAY_MS)),
      ).toBe(0);
    } finally {
      db.close();
    }
  });
});

describe('Ledger: file on disk', () => {
  it('leaves an intact database after close', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file);
    l.record(rec(T0));
    l.close();
    expect(fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0).toBe(0);
    const db = new Database(file, { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});
