// WAL checkpoints off the agent's thread. SQLite checkpoints from the connection that commits once the
// WAL passes 1000 pages: it copies them into the database file and fsyncs both, on the committing thread,
// which in the agent is the only one and carries every live stream (strace under `npm run bench` saw one
// such fsync take 16.6 ms; docs/decisions/0002-checkpoint-thread.md). A WalCheckpointer runs them on a worker thread with its
// own connection to the same file, PASSIVE (it never waits for the agent's writes, nor makes them wait).
// The ledger stops its own connection's checkpoints (wal_autocheckpoint = 0) only once the worker has
// opened the file, and turns them on again when the worker fails or stops.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** One PASSIVE checkpoint, as SQLite reports it: WAL frames in all, and how many are now in the database file. */
export interface CheckpointReport {
  busy: boolean;
  walFrames: number;
  checkpointedFrames: number;
}

export interface WalCheckpointerOptions {
  /** Between checkpoints (default 1 s). */
  intervalMs?: number;
  /** The better-sqlite3 entry the worker loads (default: the one this module resolves). */
  sqliteModule?: string;
}

export interface WalCheckpointerEvents {
  ready: [];
  checkpoint: [CheckpointReport];
  /** The worker could not open the file, a checkpoint failed, or the thread ended unasked. */
  failed: [string];
}

// CommonJS, evaluated in the worker. Messages out: {type:'ready'} | {type:'checkpoint', ...} | {type:'failed', message}.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
try {
  const Database = require(workerData.sqliteModule);
  db = new Database(workerData.file, { fileMustExist: true, timeout: 0 });
} catch (e) {
  parentPort.postMessage({ type: 'failed', message: 'cannot open the usage database for checkpoints: ' + e.message });
  process.exit(1);
}
parentPort.postMessage({ type: 'ready' });
const once = () => {
  const [r] = db.pragma('wal_checkpoint(PASSIVE)');
  return { type: 'checkpoint', busy: r.busy === 1, walFrames: r.log, checkpointedFrames: r.checkpointed };
};
const timer = setInterval(() => {
  try {
    parentPort.postMessage(once());
  } catch (e) {
    clearInterval(timer);
    parentPort.postMessage({ type: 'failed', message: 'a WAL checkpoint failed: ' + e.message });
    try { db.close(); } catch {}
    process.exit(1);
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  try { once(); } catch {}
  try { db.close(); } catch {}
  parentPort.close();
});
`;

let defaultModule: string | undefined;
function sqliteEntry(): string {
  defaultModule ??= createRequire(import.meta.url).resolve('better-sqlite3');
  return defaultModule;
}

export class WalCheckpointer extends EventEmitter<WalCheckpointerEvents> {
  private worker?: Worker;
  private stopping = false;
  private ended?: Promise<void>;
  /** 'starting' until the worker has the file open; 'failed' and 'stopped' are final. */
  state: 'starting' | 'ready' | 'failed' | 'stopped' = 'starting';

  constructor(
    private readonly file: string,
    private readonly o: WalCheckpointerOptions = {},
  ) {
    super();
  }

  start(): void {
    if (this.worker || this.state !== 'starting') return;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        // A small heap: it holds one connection and a timer.
        resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 8 },
        workerData: { file: this.file, intervalMs: this.o.intervalMs ?? 1000, sqliteModule: this.o.sqliteModule ?? sqliteEntry() },
      });
    } catch (e) {
      this.fail(`cannot start the checkpoint thread: ${(e as Error).message}`);
      return;
    }
    this.worker = worker;
    worker.unref();
    worker.on('message', (m: { type: string; message?: string } & Partial<CheckpointReport>) => {
      if (m.type === 'ready') {
        if (this.state !== 'starting') return;
        this.state = 'ready';
        this.emit('ready');
      } else if (m.type === 'checkpoint') {
        this.emit('checkpoint', { busy: m.busy === true, walFrames: Number(m.walFrames), checkpointedFrames: Number(m.checkpointedFrames) });
      } else if (m.type === 'failed') this.fail(String(m.message));
    });
    worker.on('error', (e) => this.fail(`the checkpoint thread failed: ${e.message}`));
    this.ended = new Promise((resolve) => {
      worker.once('exit', () => {
        this.worker = undefined;
        if (!this.stopping) this.fail('the checkpoint thread ended');
        resolve();
      });
    });
  }

  /** Ends the worker after one last checkpoint; resolves once its thread has exited. */
  stop(): Promise<void> {
    if (this.state !== 'failed') this.state = 'stopped';
    this.stopping = true;
    // Held again while it ends: an unref'd thread would leave whoever awaits this waiting on a loop with nothing else to do.
    this.worker?.ref();
    this.worker?.postMessage('stop');
    return this.ended ?? Promise.resolve();
  }

  private fail(message: string): void {
    if (this.state === 'failed' || this.state === 'stopped') return;
    this.state = 'failed';
    this.emit('failed', message);
  }
}
