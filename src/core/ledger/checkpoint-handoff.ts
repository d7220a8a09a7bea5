// When a connection's WAL checkpoints run on a WalCheckpointer thread: while it writes often (by default 20
// commits within 10 s) and until it has written nothing for a while (default 60 s). The thread costs 9-15 MB of
// RSS and a wake-up a second; what it saves is SQLite's automatic checkpoint on the committing thread, which
// comes once the WAL holds 1000 pages (a commit writes about 5, one of 64 rows about 13) and can hold live
// streams for a few ms. Writing less often than that, an agent checkpoints itself every few hundred commits
// (minutes apart at the least) and needs no thread; a serving one has its commits' checkpoints off its own
// thread (wal-checkpointer.ts says why).
// The connection stops checkpointing itself (wal_autocheckpoint = 0) only while a thread that has the file
// open runs, and checkpoints again (SQLite's default) before the thread is asked to stop, or when it fails.
import { EventEmitter } from 'node:events';
import type { Logger } from '../base/log';
import { WalCheckpointer, type CheckpointReport, type WalCheckpointerOptions } from './wal-checkpointer';

/** SQLite's default wal_autocheckpoint (pages). */
const SQLITE_AUTOCHECKPOINT_PAGES = 1000;

export interface CheckpointHandoffOptions extends WalCheckpointerOptions {
  /** The thread stops after this long without a write (default 60 s). */
  idleMs?: number;
  /** The thread starts at the commit that makes this many within startWindowMs (default 20; 1: at the first write). */
  startCommits?: number;
  /** See startCommits (default 10 s). */
  startWindowMs?: number;
}

export interface CheckpointHandoffEvents {
  /** Who checkpoints now. */
  mode: ['thread' | 'connection'];
  checkpoint: [CheckpointReport];
}

export class CheckpointHandoff extends EventEmitter<CheckpointHandoffEvents> {
  private thread?: WalCheckpointer;
  private lastWriteAt = 0;
  private idleTimer?: NodeJS.Timeout;
  private ended = false;
  /** The last thread's end (resolved at once when none ran). */
  private stopped: Promise<void> = Promise.resolve();
  private readonly idleMs: number;
  private readonly startCommits: number;
  private readonly startWindowMs: number;
  /** Commits counted towards a start, since windowStart. */
  private commits = 0;
  private windowStart = 0;

  constructor(
    private readonly file: string,
    /** Sets the connection's wal_autocheckpoint (0: off). */
    private readonly setAutocheckpoint: (pages: number) => void,
    private readonly log: Logger,
    private readonly o: CheckpointHandoffOptions = {},
  ) {
    super();
    this.idleMs = o.idleMs ?? 60_000;
    this.startCommits = o.startCommits ?? 20;
    this.startWindowMs = o.startWindowMs ?? 10_000;
  }

  get mode(): 'thread' | 'connection' {
    return this.thread?.state === 'ready' ? 'thread' : 'connection';
  }

  /** The connection committed a write: a thread checkpoints from now on once writes come often (started when none runs). */
  wrote(): void {
    const now = Date.now();
    this.lastWriteAt = now;
    if (this.thread || this.ended) return;
    if (now - this.windowStart > this.startWindowMs) {
      this.windowStart = now;
      this.commits = 0;
    }
    if (++this.commits < this.startCommits) return;
    this.commits = 0;
    const cp = new WalCheckpointer(this.file, this.o);
    this.thread = cp;
    cp.on('ready', () => {
      if (this.thread !== cp) return;
      this.setAutocheckpoint(0);
      this.emit('mode', 'thread');
    });
    cp.on('checkpoint', (r) => this.emit('checkpoint', r));
    cp.on('failed', (message) => {
      if (this.thread !== cp) return;
      this.setAutocheckpoint(SQLITE_AUTOCHECKPOINT_PAGES);
      // Not started again for this connection: one failure is reported, not one per write.
      this.ended = true;
      this.emit('mode', 'connection');
      this.log.warn(`${message}. The usage database is checkpointed by the agent's own thread again, which can hold live streams for a moment now and then.`);
    });
    cp.start();
    this.scheduleIdleCheck(this.idleMs);
  }

  /** For good (the connection closes): the thread ends after a last checkpoint; resolves when it has. */
  end(): Promise<void> {
    this.ended = true;
    this.stopThread();
    return this.stopped;
  }

  private scheduleIdleCheck(ms: number): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const quiet = Date.now() - this.lastWriteAt;
      if (quiet >= this.idleMs) this.stopThread();
      else this.scheduleIdleCheck(this.idleMs - quiet);
    }, ms);
    this.idleTimer.unref();
  }

  private stopThread(): void {
    clearTimeout(this.idleTimer);
    const cp = this.thread;
    if (!cp) return;
    this.thread = undefined;
    // The connection checkpoints again before the thread stops: never a moment with nobody doing it.
    if (cp.state === 'ready') {
      this.setAutocheckpoint(SQLITE_AUTOCHECKPOINT_PAGES);
      this.emit('mode', 'connection');
    }
    cp.removeAllListeners();
    this.stopped = cp.stop();
  }
}
