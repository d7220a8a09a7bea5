// WAL checkpoints on a worker thread (src/core/ledger/wal-checkpointer.ts, checkpoint-handoff.ts): the
// worker opens the real SQLite file with its own connection and checkpoints it PASSIVE; a ledger with
// checkpointOffThread starts it once writes come often (20 commits within 10 s), not for a few, stops its own connection's checkpoints only once the
// worker is ready, takes them back when the worker fails, and stops the worker when it has been idle.
import { once } from 'node:events';
import { setImmediate as nextTurn, setTimeout } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { Ledger } from '../../../src/core/ledger/ledger';
import { WalCheckpointer, type CheckpointReport } from '../../../src/core/ledger/wal-checkpointer';
import { rec, tempDir } from '../../support/ledger/helpers';

let dir: string;
let cleanup: () => void;
const closers: Array<() => Promise<void> | void> = [];
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  cleanup();
});

const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

/** Resolves with the first report for which `ok` holds. */
function reportWhere(source: NodeJS.EventEmitter, ok: (r: CheckpointReport) => boolean): Promise<CheckpointReport> {
  return new Promise((resolve) => {
    const on = (r: CheckpointReport): void => {
      if (!ok(r)) return;
      source.off('checkpoint', on);
      resolve(r);
    };
    source.on('checkpoint', on);
  });
}

/**
 * Resolves once the thread has caught up with every write: two reports in a row of the same complete
 * checkpoint (reports posted while this thread was still writing may be queued before them).
 */
function caughtUp(source: NodeJS.EventEmitter): Promise<CheckpointReport> {
  let last: CheckpointReport | undefined;
  return reportWhere(source, (r) => {
    const same = last !== undefined && last.walFrames === r.walFrames && last.checkpointedFrames === r.checkpointedFrames;
    last = r;
    return same && r.walFrames > 0 && r.checkpointedFrames === r.walFrames;
  });
}

/** A WAL kept small by its connection's own checkpoints stays under this (SQLite checkpoints at 1000 pages). */
const WAL_BOUND = 16 * 1024 * 1024;

/** The control: the WAL of 3,100 commits made with no checkpoint at all (a reader holds a snapshot). */
function uncheckpointedWalBytes(): number {
  const file = path.join(dir, 'control.sqlite');
  const l = Ledger.open(file);
  const db = new Database(file);
  try {
    db.exec('BEGIN');
    db.prepare('SELECT count(*) FROM usage').get();
    writeRecords(l, 3100);
    db.exec('COMMIT');
    return walBytes(file);
  } finally {
    db.close();
    l.close();
  }
}

function walBytes(file: string): number {
  return fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0;
}

/** How many worker threads this process starts from now on (the process 'worker' event, emitted on the next tick), read by the returned function. */
function countWorkers(): () => number {
  let n = 0;
  const on = (): void => void n++;
  process.on('worker', on);
  closers.push(() => void process.off('worker', on));
  return () => n;
}

/** Records committed one by one, as the agent commits them (one transaction each). */
function writeRecords(l: Ledger, n: number, from = 0): void {
  for (let i = from; i < from + n; i++) l.record(rec(T0 + i, { requestId: `r-${i}` }));
}

describe('WalCheckpointer', () => {
  it('checkpoints frames another connection wrote, from its own thread', async () => {
    const file = path.join(dir, 'db.sqlite');
    const db = new Database(file);
    closers.push(() => void db.close());
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0'); // this connection never checkpoints: only the worker can
    db.exec('CREATE TABLE t (x TEXT)');
    const cp = new WalCheckpointer(file, { intervalMs: 10 });
    closers.push(() => cp.stop());
    cp.start();
    await once(cp, 'ready');
    expect(cp.state).toBe('ready');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    for (let i = 0; i < 200; i++) insert.run('x'.repeat(2000));
    const done = await caughtUp(cp);
    expect(done.busy).toBe(false);
    // Every frame is in the database file now: it holds the rows without its WAL.
    db.close();
    closers.pop();
    await cp.stop();
    const copy = path.join(dir, 'copy.sqlite');
    fs.copyFileSync(file, copy);
    const read = new Database(copy, { readonly: true });
    closers.push(() => void read.close());
    expect(read.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 200 });
  });

  it('fails, and says so, when the file cannot be opened', async () => {
    const cp = new WalCheckpointer(path.join(dir, 'missing.sqlite'));
    closers.push(() => cp.stop());
    const failed = once(cp, 'failed');
    cp.start();
    const [message] = (await failed) as [string];
    expect(cp.state).toBe('failed');
    expect(message.length).toBeGreaterThan(0);
  });

  it('stop() ends the thread after a last checkpoint, and is final', async () => {
    const file = path.join(dir, 'db.sqlite');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.close();
    const cp = new WalCheckpointer(file, { intervalMs: 10 });
    cp.start();
    await once(cp, 'ready');
    const failures: string[] = [];
    cp.on('failed', (m) => failures.push(m));
    await cp.stop();
    expect(cp.state).toBe('stopped');
    expect(failures).toEqual([]); // an asked-for end is not a failure
    cp.start();
    expect(cp.state).toBe('stopped');
  });
});

describe('Ledger with checkpointOffThread', () => {
  it('hands its checkpoints to the thread: the WAL stays small while every record commits', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file, { checkpointOffThread: { intervalMs: 10 } });
    closers.push(async () => {
      l.close();
      await l.threadEnded();
    });
    const handedOff = once(l, 'checkpoints');
    const workers = countWorkers();
    writeRecords(l, 19); // a few commits: no thread
    await nextTurn(); // the 'worker' event comes on the next tick
    expect(workers()).toBe(0);
    writeRecords(l, 1, 19); // the 20th within 10 s starts it
    await nextTurn();
    expect(workers()).toBe(1);
    expect(l.checkpoints).toBe('connection'); // until the thread has the file open
    expect(await handedOff).toEqual(['thread']);
    expect(l.checkpoints).toBe('thread');
    // As the agent writes: some commits, then the thread catches up (a write after a complete
    // checkpoint starts the WAL over from its beginning).
    for (let round = 0; round < 31; round++) {
      writeRecords(l, 100, 20 + round * 100);
      await caughtUp(l);
    }
    expect(l.recent(3).map((r) => r.requestId)).toEqual(['r-3119', 'r-3118', 'r-3117']);
    expect(l.health()).toEqual({ ok: true, pending: 0, dropped: 0, invalid: 0 });
    // The same 3,100 commits without any checkpoint grow the WAL to about 110 MB; with the thread it stays at a
    // few MB (more when the thread lags on a loaded machine, never near the control).
    expect(walBytes(file)).toBeLessThan(uncheckpointedWalBytes() / 2);
  });

  it('without a checkpointer that works, its own connection checkpoints again (SQLite default)', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    const log = memoryLog();
    const l = Ledger.open(file, { log: log.child('ledger'), checkpointOffThread: { sqliteModule: path.join(dir, 'no-such-module.js') } });
    closers.push(async () => {
      l.close();
      await l.threadEnded();
    });
    const gaveUp = once(l, 'checkpoints');
    writeRecords(l, 20);
    expect(await gaveUp).toEqual(['connection']);
    expect(l.checkpoints).toBe('connection');
    expect(log.entries().filter((e) => e.level === 'warn')).toHaveLength(1);
    writeRecords(l, 3100);
    expect(l.health().ok).toBe(true);
    expect(walBytes(file)).toBeLessThan(WAL_BOUND);
  });

  it('stops the thread when nothing was written for idleMs, checkpointing itself again, and starts it at the next write', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    // idleMs well above a worker's start on a loaded machine: a thread stopped while it starts never hands off.
    const l = Ledger.open(file, { checkpointOffThread: { intervalMs: 10, idleMs: 500 } });
    closers.push(async () => {
      l.close();
      await l.threadEnded();
    });
    const modes: string[] = [];
    l.on('checkpoints', (m: string) => modes.push(m));
    const handedOff = once(l, 'checkpoints');
    writeRecords(l, 20);
    await handedOff;
    const tookBack = once(l, 'checkpoints');
    await tookBack; // 500 ms without a write
    expect(l.checkpoints).toBe('connection');
    await l.threadEnded();
    const again = once(l, 'checkpoints');
    writeRecords(l, 20, 20);
    await again;
    expect(modes).toEqual(['thread', 'connection', 'thread']);
    expect(l.recent(40)).toHaveLength(40);
  });

  it('starts no thread for commits that come less often than startCommits within startWindowMs', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file, { checkpointOffThread: { intervalMs: 10, startCommits: 5, startWindowMs: 100 } });
    closers.push(async () => {
      l.close();
      await l.threadEnded();
    });
    const workers = countWorkers();
    const t0 = Date.now();
    writeRecords(l, 4);
    // The window itself is what is tested: the next commits come after it has passed.
    await setTimeout(Math.max(0, 150 - (Date.now() - t0)));
    writeRecords(l, 4, 4);
    await nextTurn(); // the 'worker' event comes on the next tick
    expect(workers()).toBe(0);
    expect(l.checkpoints).toBe('connection');
    writeRecords(l, 1, 8); // the fifth within this window
    await nextTurn();
    expect(workers()).toBe(1);
    expect(l.recent(10)).toHaveLength(9);
  });
});
