import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { Ledger, type LedgerHealth } from '../../../src/core/ledger/ledger';
import { LATEST_VERSION, migrate, schemaVersion } from '../../../src/core/ledger/migrations';
import { DETAIL_MAX, railCost, railSpans, type RailEvent, type RailRow } from '../../../src/core/ledger/rail-events';
import { rec, tempDir } from '../../support/ledger/helpers';

let dir: string;
let cleanup: () => void;
const toClose: Array<{ close(): void }> = [];
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => {
  for (const c of toClose.splice(0).reverse()) c.close();
  cleanup();
});

const T = Date.UTC(2025, 5, 1, 12, 0, 0);
const MIN = 60_000;

function open(opts: Parameters<typeof Ledger.open>[1] = {}, file = path.join(dir, 'ledger.sqlite')): Ledger {
  const l = Ledger.open(file, { now: () => T + 60 * MIN, ...opts });
  toClose.push(l);
  return l;
}

const pause = (at: number, cause: string, active: boolean): RailEvent => ({
  at,
  code: `${active ? 'pause' : 'resume'}_${cause}`,
  rail: 'pause',
  cause,
  active,
  gpu: null,
  detail: cause,
});
const hot = (at: number, code: 'gpu_hot_throttle' | 'gpu_hot_pause' | 'gpu_cool_resume', gpu = 0): RailEvent => ({
  at,
  code,
  rail: 'throttle',
  cause: 'gpu_hot',
  active: code !== 'gpu_cool_resume',
  gpu,
  detail: `GPU ${gpu}`,
});
const start = (at: number): RailEvent => ({ at, code: 'rails_start', rail: 'all', cause: 'agent', active: false, gpu: null, detail: 'the agent started' });

function waitForHealth(l: Ledger, ok: (h: LedgerHealth) => boolean): Promise<void> {
  if (ok(l.health())) return Promise.resolve();
  return new Promise((resolve) => {
    const on = (h: LedgerHealth): void => {
      if (!ok(h)) return;
      l.off('health', on);
      resolve();
    };
    l.on('health', on);
  });
}

describe('rail_events (schema v7)', () => {
  it('an upgrade from v6 keeps the usage rows and adds the empty table', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const v6 = new Database(file);
    migrate(v6, 6);
    v6.close();
    const before = open({}, file);
    before.record(rec(T, { requestId: 'old-1' }));
    before.close();
    // The file the agent of v6 left: the step is taken away again to stand for it.
    const db = new Database(file);
    db.exec('DROP TABLE rail_events; DELETE FROM schema_version WHERE version = 7;');
    expect(schemaVersion(db)).toBe(6);
    db.close();

    const l = open({}, file);
    expect(l.health().ok).toBe(true);
    expect(l.recent(10).map((r) => r.requestId)).toEqual(['old-1']);
    expect(l.recentRails(10)).toEqual([]);
    l.recordRail(hot(T, 'gpu_hot_throttle'));
    expect(l.recentRails(10).map((e) => e.code)).toEqual(['gpu_hot_throttle']);
    const check = new Database(file, { readonly: true });
    toClose.push(check);
    expect(schemaVersion(check)).toBe(LATEST_VERSION);
    expect(LATEST_VERSION).toBe(7);
  });

  it('writes each decision and reads them back newest first, with the GPU and a bounded detail', () => {
    const l = open();
    l.recordRail(start(T));
    l.recordRail(hot(T + MIN, 'gpu_hot_throttle', 1));
    l.recordRail({ ...hot(T + 2 * MIN, 'gpu_hot_pause', 1), detail: 'x'.repeat(5000) });
    l.recordRail(pause(T + 2 * MIN, 'gpu_hot', true));
    l.recordRail(hot(T + 5 * MIN, 'gpu_cool_resume', 1));
    l.recordRail(pause(T + 5 * MIN, 'gpu_hot', false));
    const rows = l.recentRails(10);
    expect(rows.map((e) => e.code)).toEqual(['resume_gpu_hot', 'gpu_cool_resume', 'pause_gpu_hot', 'gpu_hot_pause', 'gpu_hot_throttle', 'rails_start']);
    expect(rows.map((e) => e.gpu)).toEqual([null, 1, null, 1, 1, null]);
    expect(rows[3]!.detail.length).toBe(DETAIL_MAX);
    expect(rows[3]!.active).toBe(true);
    expect(l.recentRails(2)).toHaveLength(2);
  });

  it('refuses a decision without a stable code, counting it, and never throws', () => {
    const l = open();
    expect(() => l.recordRail({ ...start(T), code: 'Not A Code' })).not.toThrow();
    expect(() => l.recordRail({ ...start(T), at: Number.NaN })).not.toThrow();
    expect(l.recentRails(10)).toEqual([]);
    expect(l.health().invalid).toBe(2);
  });

  it('holds decisions while the database is locked and writes them, in order, when it is free', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    const l = open({ busyTimeoutMs: 20, retryMinMs: 10, retryMaxMs: 50 }, file);
    l.recordRail(hot(T, 'gpu_hot_throttle'));
    const other = new Database(file);
    toClose.push(other);
    other.exec('BEGIN EXCLUSIVE');
    l.recordRail(hot(T + 1, 'gpu_hot_pause'));
    expect(l.health().ok).toBe(false);
    l.recordRail(hot(T + 2, 'gpu_cool_resume'));
    other.exec('COMMIT');
    await waitForHealth(l, (h) => h.ok);
    expect(l.recentRails(10).map((e) => e.code)).toEqual(['gpu_cool_resume', 'gpu_hot_pause', 'gpu_hot_throttle']);
  });

  it('keeps at most maxPendingRails held decisions (the oldest dropped, logged with a code) and says what a close loses', () => {
    const file = path.join(dir, 'ledger.sqlite');
    const log = memoryLog();
    const l = open({ busyTimeoutMs: 20, retryMinMs: 60_000, log: log.child('ledger') }, file);
    // Reach the writer's bound through a small ledger: 1,000 by default, so 1,003 decisions drop 3.
    const other = new Database(file);
    toClose.push(other);
    other.exec('BEGIN EXCLUSIVE');
    for (let i = 0; i < 1003; i++) l.recordRail(pause(T + i, 'gpu_busy', i % 2 === 0));
    expect(
      log
        .entries(100, 'error')
        .map((e) => e.msg)
        .join('\n'),
    ).toMatch(/ledger_rails_dropped: 1 so far/);
    other.exec('ROLLBACK');
    other.close();
    l.close();
    // close() writes what it can: the 1,000 held.
    const check = new Database(file, { readonly: true });
    toClose.push(check);
    expect(check.prepare('SELECT count(*) FROM rail_events').pluck().get()).toBe(1000);
    expect(check.prepare('SELECT min(at) FROM rail_events').pluck().get()).toBe(T + 3);
  });
});

describe('time paused and throttled by cause (railSpans and railSummary)', () => {
  it('sums each cause, counts a moment paused by two causes once (manual > gpu_hot > gpu_busy > schedule)', () => {
    const l = open({ now: () => T + 120 * MIN });
    l.recordRail(start(T));
    l.recordRail(pause(T + 10 * MIN, 'gpu_busy', true));
    l.recordRail(hot(T + 12 * MIN, 'gpu_hot_throttle'));
    l.recordRail(hot(T + 14 * MIN, 'gpu_hot_pause'));
    l.recordRail(pause(T + 14 * MIN, 'gpu_hot', true));
    l.recordRail(hot(T + 16 * MIN, 'gpu_cool_resume'));
    l.recordRail(pause(T + 16 * MIN, 'gpu_hot', false));
    l.recordRail(pause(T + 20 * MIN, 'gpu_busy', false));
    const s = l.railSummary(T, T + 60 * MIN);
    expect(s.pausedByCause).toEqual({ gpu_busy: 8 * MIN, gpu_hot: 2 * MIN });
    expect(s.pausedMs).toBe(10 * MIN);
    expect(s.throttledByCause).toEqual({ gpu_hot: 4 * MIN });
    expect(s.openPause).toEqual([]);
  });

  it('a pause begun before the range counts from its start, one still open at the end runs to now', () => {
    const l = open({ now: () => T + 30 * MIN });
    l.recordRail(pause(T - 10 * MIN, 'schedule', true));
    l.recordRail(pause(T + 5 * MIN, 'schedule', false));
    l.recordRail(pause(T + 20 * MIN, 'manual', true));
    // Asked for the whole hour: the open manual pause ends at now (T + 30 min), not at the end of the hour.
    const s = l.railSummary(T, T + 60 * MIN);
    expect(s.pausedByCause).toEqual({ schedule: 5 * MIN, manual: 10 * MIN });
    expect(s.to).toBe(T + 30 * MIN);
    expect(s.openPause).toEqual(['manual']);
    // A range in the past ends at its own end.
    expect(l.railSummary(T, T + 25 * MIN).pausedByCause).toEqual({ schedule: 5 * MIN, manual: 5 * MIN });
  });

  it("the agent's start ends every span an earlier run left open", () => {
    const l = open({ now: () => T + 60 * MIN });
    l.recordRail(pause(T - 5 * MIN, 'gpu_busy', true));
    l.recordRail(hot(T - 5 * MIN, 'gpu_hot_throttle'));
    l.recordRail(start(T + 3 * MIN));
    const s = l.railSummary(T, T + 60 * MIN);
    expect(s.pausedByCause).toEqual({ gpu_busy: 3 * MIN });
    expect(s.throttledByCause).toEqual({ gpu_hot: 3 * MIN });
    // A start before the range: nothing open at its start.
    expect(l.railSummary(T + 10 * MIN, T + 60 * MIN).pausedMs).toBe(0);
  });

  it('railSpans alone: rows in id order, not time order, decide; an empty range is zero', () => {
    const row = (id: number, e: RailEvent): RailRow => ({
      id,
      at: e.at,
      code: e.code,
      rail: e.rail,
      cause: e.cause,
      active: e.active ? 1 : 0,
      gpu: e.gpu ?? null,
      detail: e.detail,
    });
    const s = railSpans([], [row(2, pause(T + MIN, 'manual', false)), row(1, pause(T + MIN, 'manual', true))], T, T + 10 * MIN);
    expect(s.pausedMs).toBe(0);
    expect(railSpans([row(1, pause(T - MIN, 'manual', true))], [], T, T).pausedMs).toBe(0);
    expect(railSpans([row(1, pause(T - MIN, 'manual', true))], [], T, T + MIN).pausedByCause).toEqual({ manual: MIN });
  });
});

describe('what the pauses cost (railCost, railSummaryWithCost)', () => {
  const HOUR = 60 * MIN;

  it('estimates each cause at the rate of the served time, counts declined requests, and says unknown without history', () => {
    // 4 served hours before the pause, 40 paid hub requests of $0.01 (100 in + 50 out tokens at $40/$120 per 1M).
    const now = T + 6 * HOUR;
    const l = open({ now: () => now });
    l.setPrice('llama-3.1-8b', 40, 120, T - HOUR);
    expect(l.railSummaryWithCost(T, now).cost).toMatchObject({ known: false, requests: 0, earnings: 0 });
    for (let i = 0; i < 40; i++) l.record(rec(T + i * 6 * MIN + 1000));
    l.record(rec(T + 5 * HOUR, { status: 'rejected', statusCode: 429, tokensIn: 0, tokensOut: 0 }));
    l.record(rec(T + 5 * HOUR, { source: 'local', status: 'rejected', statusCode: 429, tokensIn: 0, tokensOut: 0 }));
    l.recordRail(pause(T + 4 * HOUR, 'gpu_busy', true));
    l.recordRail(pause(T + 5 * HOUR, 'gpu_busy', false));
    l.recordRail(pause(T + 5 * HOUR, 'manual', true));
    l.recordRail(pause(T + 5 * HOUR + 30 * MIN, 'manual', false));
    const s = l.railSummaryWithCost(T + 4 * HOUR, now);
    expect(s.pausedByCause).toEqual({ gpu_busy: HOUR, manual: 30 * MIN });
    // Served: from the first hub request (finished at T + 1 s) to now, less 1.5 h paused: 4.5 h less 1 s; 40 requests, $0.40.
    const c = s.cost!;
    expect(c.known).toBe(true);
    expect(c.basisMs).toBe(4.5 * HOUR - 1000);
    expect(c.byCause.gpu_busy!.requests).toBe(Math.round(40 / 4.5));
    expect(c.byCause.gpu_busy!.earnings).toBeCloseTo(0.4 / 4.5, 4);
    expect(c.byCause.manual!.requests).toBe(Math.round(20 / 4.5));
    expect(c.requests).toBe(c.byCause.gpu_busy!.requests + c.byCause.manual!.requests);
    // Only the network's refusals are counted (the local one is not).
    expect(c.declined).toBe(1);
  });

  it('railCost alone: no estimate under an hour served or without a paid request', () => {
    const summary = railSpans([], [], T, T + HOUR);
    const withPause = { ...summary, pausedMs: 10 * MIN, pausedByCause: { schedule: 10 * MIN } };
    expect(railCost(withPause, { servedMs: 59 * MIN, hubRequests: 100, earnings: 1 }, 0)).toMatchObject({ known: false, requests: 0, byCause: {} });
    expect(railCost(withPause, { servedMs: 10 * HOUR, hubRequests: 100, earnings: 0 }, 0).known).toBe(false);
    expect(railCost(withPause, { servedMs: 10 * HOUR, hubRequests: 600, earnings: 6 }, 2)).toMatchObject({
      known: true,
      declined: 2,
      requests: 10,
      byCause: { schedule: { requests: 10, earnings: 0.1 } },
    });
  });
});
