// sha256 of weight files on a worker thread, so hashing 20 GB never holds the agent's event loop (the relay's
// streams, the link's heartbeats). The worker reads each file sequentially in 4 MiB blocks as fast as the
// disk gives them, reports progress a few times a second, and is started on the first job and ended when
// the weights service has nothing left to hash (it holds no memory while idle). On Linux the thread lowers
// its own priority to nice 19 (a nice value is per thread there): a file already in the page cache makes
// hashing pure CPU, and on a machine with few cores the relay must get the CPU first (docs/performance.md).
import { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';

export interface FileHash {
  sha256: string;
  size: number;
  mtimeMs: number;
}

/** Why a file could not be hashed: gone, unreadable, or changed while it was read (hashed again later). */
export class HashError extends Error {
  constructor(
    message: string,
    readonly code: 'missing' | 'unreadable' | 'changed' | 'stopped',
  ) {
    super(message);
    this.name = 'HashError';
  }
}

export interface FileHasher {
  hash(file: string, onProgress?: (doneBytes: number) => void): Promise<FileHash>;
  /** Ends the worker; a job in flight rejects with HashError 'stopped'. */
  stop(): Promise<void>;
}

// CommonJS, evaluated in the worker. In: {id, path, progressMs}. Out: {type:'progress', id, done} |
// {type:'done', id, sha256, size, mtimeMs, changed} | {type:'failed', id, code, message}.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const crypto = require('node:crypto');
// setpriority(PRIO_PROCESS, 0) is this thread alone on Linux; elsewhere it would be the whole process.
if (process.platform === 'linux') try { require('node:os').setPriority(19); } catch {}
const buf = Buffer.allocUnsafe(4 << 20);
parentPort.on('message', (job) => {
  let fd;
  try {
    fd = fs.openSync(job.path, 'r');
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw Object.assign(new Error('not a regular file'), { code: 'EISDIR' });
    const h = crypto.createHash('sha256');
    let done = 0;
    let last = Date.now();
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(n === buf.length ? buf : buf.subarray(0, n));
      done += n;
      const now = Date.now();
      if (now - last >= job.progressMs) {
        last = now;
        parentPort.postMessage({ type: 'progress', id: job.id, done });
      }
    }
    const after = fs.fstatSync(fd);
    parentPort.postMessage({ type: 'done', id: job.id, sha256: h.digest('hex'), size: done, mtimeMs: st.mtimeMs, changed: after.size !== st.size || after.mtimeMs !== st.mtimeMs || done !== st.size });
  } catch (e) {
    parentPort.postMessage({ type: 'failed', id: job.id, code: e.code || '', message: e.message });
  } finally {
    if (fd !== undefined) try { fs.closeSync(fd); } catch {}
  }
});
`;

type WorkerMessage =
  | { type: 'progress'; id: number; done: number }
  | { type: 'done'; id: number; sha256: string; size: number; mtimeMs: number; changed: boolean }
  | { type: 'failed'; id: number; code: string; message: string };

interface Pending {
  file: string;
  resolve: (h: FileHash) => void;
  reject: (e: HashError) => void;
  onProgress?: (done: number) => void;
}

/** One worker thread, one file at a time (a disk reads fastest sequentially). */
export class WorkerHasher extends EventEmitter implements FileHasher {
  private worker?: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly opts: { progressMs?: number } = {}) {
    super();
  }

  hash(file: string, onProgress?: (doneBytes: number) => void): Promise<FileHash> {
    const w = this.start();
    const id = this.nextId++;
    return new Promise<FileHash>((resolve, reject) => {
      this.pending.set(id, { file, resolve, reject, ...(onProgress ? { onProgress } : {}) });
      w.postMessage({ id, path: file, progressMs: this.opts.progressMs ?? 250 });
    });
  }

  async stop(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failAll('stopped', 'hashing stopped');
    if (w) await w.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_SOURCE, { eval: true });
    // Never what keeps the process alive: the agent stops it, and an exit does not wait for a hash.
    w.unref();
    w.on('message', (m: WorkerMessage) => this.onMessage(m));
    w.on('error', (e) => {
      if (this.worker === w) this.worker = undefined;
      this.failAll('unreadable', `the hashing thread failed: ${e.message}`);
    });
    w.on('exit', () => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.failAll('stopped', 'the hashing thread ended');
    });
    this.worker = w;
    return w;
  }

  private onMessage(m: WorkerMessage): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'progress') {
      p.onProgress?.(m.done);
      return;
    }
    this.pending.delete(m.id);
    if (m.type === 'done') {
      if (m.changed) p.reject(new HashError(`${p.file} changed while it was hashed`, 'changed'));
      else p.resolve({ sha256: m.sha256, size: m.size, mtimeMs: m.mtimeMs });
    } else {
      const missing = m.code === 'ENOENT' || m.code === 'ENOTDIR';
      p.reject(new HashError(missing ? `${p.file} is not there` : `cannot read ${p.file}: ${m.message}`, missing ? 'missing' : 'unreadable'));
    }
  }

  private failAll(code: HashError['code'], message: string): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(new HashError(message, code));
    }
  }
}
