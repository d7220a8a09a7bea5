// The ledger's database file and its one connection: opened (created and migrated as needed) in WAL with
// synchronous = NORMAL, its failures turned into what the owner needs to know (db-errors.ts), dropped when
// the file is damaged or vanished so the next open starts fresh, and its WAL checkpoints handed to a worker
// thread when asked. The writer, the stored settings, the queries and maintenance all go through it.
//
// Durability: WAL with synchronous = NORMAL. A commit is in the WAL (the OS cache) before it returns, so a
// record whose record() returned survives a killed or crashed agent (tested with SIGKILL) and the file is
// never corrupted. FULL would also survive a power cut, at one fsync per finished request on the agent's
// only thread: `npm run bench` measured that stall holding every other live stream (relay p99 +37..+189 ms
// with FULL against +18 ms with the ledger off), so the agent takes NORMAL — a power cut can roll back the
// last moments of records, never a stream's tokens.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { Logger } from '../base/log';
import { DIR_MODE } from '../config/home';
import { CheckpointHandoff, type CheckpointHandoffOptions } from './checkpoint-handoff';
import { LedgerUnavailableError, LedgerValueError, describeDbFailure, type DbFailure } from './db-errors';
import { migrate } from './migrations';
import { UsageQueries } from './queries';

/** An open connection: the database and the read statements; each part prepares its own writes on 'open'. */
export interface Connection {
  db: Database.Database;
  queries: UsageQueries;
}

export interface StoreOptions {
  log: Logger;
  busyTimeoutMs: number;
  checkpointOffThread?: CheckpointHandoffOptions;
}

export interface StoreEvents {
  /** A connection was opened (first, or after a failure): prepare statements, read stored values. */
  open: [Connection];
  /** A failure: `changed` when it is new or different from the one before (logged then, once). */
  failure: [DbFailure, boolean];
  checkpoints: ['thread' | 'connection'];
  checkpoint: [unknown];
}

export class LedgerStore extends EventEmitter<StoreEvents> {
  conn: Connection | null = null;
  failure: DbFailure | null = null;
  closed = false;
  /** The connection's checkpoint thread, when checkpointOffThread. */
  private handoff?: CheckpointHandoff;
  private handoffEnded: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly o: StoreOptions,
  ) {
    super();
  }

  get usable(): boolean {
    return this.conn !== null && this.failure === null && !this.closed;
  }

  /** Opens the file (creating and migrating it as needed); false (after fail()) when it cannot be used. */
  connect(): boolean {
    let db: Database.Database | undefined;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: DIR_MODE });
      // Created 0600 before SQLite opens it: its -wal and -shm files take the database file's mode.
      fs.closeSync(fs.openSync(this.file, 'a', 0o600));
      db = new Database(this.file, { timeout: this.o.busyTimeoutMs });
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') this.o.log.warn(`The usage database could not switch to WAL mode (it uses ${String(mode)}); writes are still safe but slower.`);
      db.pragma('synchronous = NORMAL');
      db.pragma('journal_size_limit = 67108864');
      if (this.failure?.kind === 'corrupt') {
        // Opening only reads the header; after damage was seen, look at every page before trusting the file again.
        const check = String(db.pragma('quick_check', { simple: true }));
        if (check !== 'ok') throw Object.assign(new Error(`integrity check failed: ${check.split('\n')[0]}`), { code: 'SQLITE_CORRUPT' });
      }
      const applied = migrate(db, undefined, undefined, (line) => this.o.log.info(line));
      if (applied.length > 0) {
        // A new file runs every step from the first: it was created, not upgraded.
        const latest = applied[applied.length - 1];
        this.o.log.info(
          applied[0] === 1 ? `Usage database ${this.file} created (schema v${latest}).` : `Usage database ${this.file} upgraded to schema v${latest}.`,
        );
      }
      const conn: Connection = { db, queries: new UsageQueries(db) };
      this.conn = conn;
      this.emit('open', conn);
      if (this.o.checkpointOffThread) this.handOffCheckpoints(conn, this.o.checkpointOffThread);
      return true;
    } catch (err) {
      try {
        db?.close();
      } catch {
        // the handle is unusable anyway
      }
      this.conn = null;
      this.fail(err);
      return false;
    }
  }

  /** Records a failure: logged once per change, the connection dropped when the file needs reopening. */
  fail(err: unknown): void {
    const f = describeDbFailure(this.file, readOnlyCause(this.file, err) ?? err);
    const changed = !this.failure || this.failure.kind !== f.kind || this.failure.detail !== f.detail;
    this.failure = f;
    if (f.reopen) this.closeConn();
    this.emit('failure', f, changed);
  }

  /** The database works again (a retry wrote what was held). */
  recovered(): void {
    this.failure = null;
  }

  requireConn(): Connection {
    if (this.closed) throw new LedgerUnavailableError('closed', 'The usage ledger is closed.');
    if (!this.conn)
      throw new LedgerUnavailableError(this.failure?.kind ?? 'unavailable', this.failure?.message ?? `The usage database ${this.file} is not open.`);
    return this.conn;
  }

  /** Runs a read; a database failure becomes LedgerUnavailableError with owner-facing text. */
  read<T>(fn: (q: UsageQueries, conn: Connection) => T): T {
    const conn = this.requireConn();
    try {
      return fn(conn.queries, conn);
    } catch (err) {
      // A refused value is the caller's, not the database's (RangeError: better-sqlite3's for a bad binding).
      if (err instanceof LedgerValueError || err instanceof RangeError) throw err;
      const f = describeDbFailure(this.file, err);
      if (f.reopen) this.fail(err);
      throw new LedgerUnavailableError(f.kind, f.message);
    }
  }

  /** A write happened on this connection (the checkpoint thread counts them). */
  wrote(): void {
    this.handoff?.wrote();
  }

  /** Who checkpoints the WAL now: the checkpoint thread, or the connection that commits (SQLite's default). */
  get checkpoints(): 'thread' | 'connection' {
    return this.handoff?.mode ?? 'connection';
  }

  /** Resolves once the checkpoint thread of the last connection has ended (at once without one). */
  threadEnded(): Promise<void> {
    return this.handoffEnded;
  }

  close(): void {
    this.closed = true;
    this.closeConn();
  }

  /** This connection's checkpoints go to a worker thread while it writes (checkpoint-handoff.ts). */
  private handOffCheckpoints(conn: Connection, opts: CheckpointHandoffOptions): void {
    const handoff = new CheckpointHandoff(
      this.file,
      (pages) => {
        if (this.conn !== conn) return;
        try {
          conn.db.pragma(`wal_autocheckpoint = ${pages}`);
        } catch (err) {
          this.fail(err);
        }
      },
      this.o.log,
      opts,
    );
    handoff.on('mode', (mode) => this.emit('checkpoints', mode));
    handoff.on('checkpoint', (report) => this.emit('checkpoint', report));
    this.handoff = handoff;
  }

  closeConn(): void {
    const handoff = this.handoff;
    this.handoff = undefined;
    if (handoff) {
      handoff.removeAllListeners();
      // The worker's last checkpoint and close may come after this connection's: SQLite's last close checkpoints.
      this.handoffEnded = handoff.end();
    }
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    try {
      conn.db.close();
    } catch (err) {
      this.o.log.warn(`Closing the usage database failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * SQLite says only "disk I/O error" when a write through its open file fails because the disk turned
 * read-only under it (ext4 after an error: EROFS on every write, open files too). Opening the file for
 * writing then says EROFS: the failure is the disk's (read_only), not a folder or a permission to check.
 */
function readOnlyCause(file: string, err: unknown): Error | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_IOERR')) return undefined;
  try {
    fs.closeSync(fs.openSync(file, 'r+'));
    return undefined;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EROFS' ? (e as Error) : undefined;
  }
}
