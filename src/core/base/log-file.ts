// The log's file: JSON lines rolled by size with pino-roll (`logs/agent.1.jsonl`, `agent.2.jsonl`…, the oldest
// removed past `keep`), `logs/agent.jsonl` a link to the one in use, so the log can never fill the disk.
//
// A full or read-only disk must not take the agent with it: the stream has an 'error' listener (without one
// every failed write was an uncaught exception), lines wait in a bounded buffer while writes fail (the rest
// are dropped and counted), a failed write is tried again every few seconds and on the next line (the file
// opened again at its path while the disk is read-only: a remounted disk is a new file), and a
// stop flushes with a deadline — never with SonicBoom's flushSync, which retries an ENOSPC write every 100 ms
// for ever (pino.destination() registers exactly that at process exit: the hang this file replaces).
import fs from 'node:fs';
import path from 'node:path';
import pinoRoll from 'pino-roll';

/** Why the file is not being written: a stable code, for the verdict and the console. */
export type LogFileProblemCode = 'disk_full' | 'disk_read_only' | 'log_write_failed';

export interface LogFileProblem {
  code: LogFileProblemCode;
  /** The file that cannot be written. */
  file: string;
  /** The system's error (`ENOSPC: no space left on device, write`). */
  detail: string;
}

export interface LogFileOptions {
  /** The file readers open (`<home>/logs/agent.jsonl`): a link to the numbered file in use. */
  file: string;
  /** A file is rolled past this size (default 20 MB). */
  maxBytes?: number;
  /** Rolled files kept besides the one in use (default 4: at most about 100 MB of log). */
  keep?: number;
  /** Told when writing starts failing (the problem) and when it works again (null). */
  onProblem?: (problem: LogFileProblem | null, droppedLines: number) => void;
}

const DEFAULT_MAX_BYTES = 20 * 1024 * 1024;
const DEFAULT_KEEP = 4;
/** Lines held while the file cannot be written (or is not open yet); past this they are dropped and counted. */
const HELD_BYTES = 1024 * 1024;
/** How often a failing file is tried again when no new line comes to try it. */
const RETRY_MS = 5_000;

/** The code of a write failure, from the system's error code. */
export function logProblemCode(err: unknown): LogFileProblemCode {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return 'disk_full';
  if (code === 'EROFS') return 'disk_read_only';
  return 'log_write_failed';
}

type RollStream = Awaited<ReturnType<typeof pinoRoll>>;

export class LogFile {
  private stream?: RollStream;
  private opening?: Promise<void>;
  /** Lines written before the rolled stream was open. */
  private early: string[] = [];
  /** Bytes handed to the stream and not yet written (or held before it opened). */
  private unwritten = 0;
  private problemNow: LogFileProblem | null = null;
  private dropped = 0;
  private retryTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly base: string;

  constructor(private readonly o: LogFileOptions) {
    const dir = path.dirname(o.file);
    // Synchronous, so a home that cannot hold a log folder says so to the caller at once (EROFS, EACCES).
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.base = path.join(dir, path.basename(o.file, '.jsonl'));
    adoptUnrolledFile(o.file, this.base);
    this.opening = pinoRoll({
      // pino-roll takes the extension from the name (`agent.jsonl` → `agent.1.jsonl`; its `extension` option is not read).
      file: o.file,
      size: `${o.maxBytes ?? DEFAULT_MAX_BYTES}b`,
      limit: { count: o.keep ?? DEFAULT_KEEP, removeOtherLogFiles: true },
      mkdir: true,
      mode: 0o600,
      maxLength: HELD_BYTES,
    }).then(
      (stream) => this.opened(stream),
      (err: unknown) => this.failed(err),
    );
  }

  /** Why the file is not being written now, or null. */
  problem(): LogFileProblem | null {
    return this.problemNow;
  }

  /** Lines dropped since writing last worked (the held buffer was full). */
  droppedLines(): number {
    return this.dropped;
  }

  /** pino's destination: one JSON line. Never throws. */
  write(line: string): void {
    if (this.closed) return;
    const bytes = Buffer.byteLength(line);
    if (!this.stream) {
      if (this.unwritten + bytes > HELD_BYTES) return this.drop();
      this.early.push(line);
      this.unwritten += bytes;
      return;
    }
    this.unwritten += bytes;
    this.stream.write(line); // past HELD_BYTES it emits 'drop' (counted there)
  }

  /**
   * Resolves once what was written so far is in the file, or at the deadline, or at once while the file
   * cannot be written (a full disk would never take it): a stop never waits longer than `deadlineMs`.
   */
  async flush(deadlineMs = 2_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    await withDeadline(this.opening ?? Promise.resolve(), deadlineMs);
    const stream = this.stream;
    if (!stream || this.problemNow || this.unwritten === 0) return;
    await withDeadline(
      new Promise<void>((resolve) => {
        const done = (): void => {
          stream.off('drain', done);
          stream.off('error', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('error', done);
      }),
      Math.max(0, until - Date.now()),
    );
  }

  /** Flushes (with the deadline) and closes the file; lines written after are ignored. */
  async close(deadlineMs = 2_000): Promise<void> {
    if (this.closed) return;
    await this.flush(deadlineMs);
    this.closed = true;
    clearInterval(this.retryTimer);
    const stream = this.stream;
    if (!stream) return;
    // end() on a failing stream would keep retrying its buffer; destroy() lets go of it.
    if (this.problemNow || this.unwritten > 0) stream.destroy();
    else stream.end();
  }

  private opened(stream: RollStream): void {
    this.stream = stream;
    this.opening = undefined;
    stream.on('error', (err: unknown) => this.failed(err));
    stream.on('write', (n: number) => this.wrote(n));
    stream.on('drop', (data: string | Buffer) => {
      this.unwritten -= Buffer.byteLength(data);
      this.drop();
    });
    stream.on('ready', () => linkCurrent(this.o.file, stream.file));
    if (stream.fd >= 0) linkCurrent(this.o.file, stream.file); // opened before this listener came
    if (this.closed) {
      stream.destroy();
      return;
    }
    const early = this.early;
    this.early = [];
    this.unwritten = 0;
    for (const line of early) this.write(line);
  }

  private wrote(n: number): void {
    this.unwritten = Math.max(0, this.unwritten - n);
    if (!this.problemNow) return;
    const dropped = this.dropped;
    this.problemNow = null;
    this.dropped = 0;
    clearInterval(this.retryTimer);
    this.retryTimer = undefined;
    this.o.onProblem?.(null, dropped);
  }

  private failed(err: unknown): void {
    const detail = err instanceof Error ? err.message : String(err);
    const code = logProblemCode(err);
    const changed = this.problemNow?.code !== code;
    this.problemNow = { code, file: this.o.file, detail };
    if (!this.retryTimer && this.stream && !this.closed) {
      this.retryTimer = setInterval(() => this.retry(), RETRY_MS);
      this.retryTimer.unref();
    }
    if (changed) this.o.onProblem?.(this.problemNow, this.dropped);
  }

  /**
   * Tries the held buffer again (SonicBoom keeps it after a failed write). A full disk takes it through the
   * same file once there is room: a write of nothing starts it. A read-only one never will through the file
   * open now (ext4 after an error refuses every write of that mount, for as long as it is mounted): the file
   * is opened again at its path, which works once the disk was checked and mounted again.
   */
  private retry(): void {
    const stream = this.stream;
    if (!stream || this.closed) return;
    if (this.problemNow?.code !== 'disk_read_only') return void stream.write('');
    try {
      stream.reopen(); // a failed open emits 'error' (failed(): the same problem, said once)
    } catch (err) {
      this.failed(err);
    }
  }

  private drop(): void {
    this.dropped++;
  }
}

/** A log file of an older version (not a link, not numbered) becomes the first numbered one, so it is continued. */
function adoptUnrolledFile(file: string, base: string): void {
  try {
    const st = fs.lstatSync(file);
    const first = `${base}.1.jsonl`;
    if (st.isFile() && !fs.existsSync(first)) fs.renameSync(file, first);
  } catch {
    // none there: nothing to adopt
  }
}

/** Points `file` at the numbered file in use (replaced in one rename; where links are not allowed, left out). */
function linkCurrent(file: string, current: string | undefined): void {
  if (!current) return;
  const tmp = `${file}.link-${process.pid}`;
  try {
    fs.rmSync(tmp, { force: true });
    fs.symlinkSync(path.basename(current), tmp);
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

function withDeadline(p: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref();
    void p.then(
      () => {
        clearTimeout(t);
        resolve();
      },
      () => {
        clearTimeout(t);
        resolve();
      },
    );
  });
}
