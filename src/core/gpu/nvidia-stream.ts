// ONE long-running `nvidia-smi --query-gpu=… -lms <interval>`: nvidia-smi keeps NVML open and
// prints one CSV line per GPU each interval, so a sample costs a few lines of parsing instead of a
// process start and an NVML initialisation. The child dying or going silent (driver reload, hung
// GPU) is reported as an outage and the child is restarted with exponential backoff.
import type { ChildProcess } from 'node:child_process';
import type { GpuDeviceSample } from '../../shared/types';
import type { Logger } from '../base/log';
import { parseSampleLine, queryArgs, SAMPLE_FIELDS } from './nvidia-parse';
import { killTree, spawnTool } from './run-tool';
import { backoffDelay, type Backoff, type SampleSource, type SourceEvents } from './sample-source';
import { Ring } from '../../shared/ring';

export interface StreamOptions {
  file: string;
  env: NodeJS.ProcessEnv;
  intervalMs: number;
  backoff: Backoff;
  /** Silence longer than this many intervals, once output has started, means hung. */
  hangIntervals: number;
  /** Silence allowed before the first line (NVML start-up on a multi-GPU box takes seconds). */
  startupGraceMs: number;
  log?: Logger;
}

export class NvidiaStreamSource implements SampleSource {
  readonly name = 'nvidia-smi -lms';
  private child: ChildProcess | null = null;
  private buf = '';
  private pending = new Map<number, GpuDeviceSample>();
  private expected = 0;
  private settleTimer: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private spawnedAt = 0;
  private lastOutputAt = 0;
  private gotOutput = false;
  /** The tool's own words about a failure (first two lines since the last good frame). */
  private errLines: string[] = [];
  private attempts = 0;
  private lastTickAt = 0;
  private stopped = false;
  // Settled exits are of no further use: the last few are kept.
  private readonly exits = new Ring<Promise<void>>(4);

  constructor(
    private readonly opts: StreamOptions,
    private readonly events: SourceEvents,
  ) {}

  start(): void {
    this.stopped = false;
    this.spawnChild();
  }

  tick(now: number): void {
    const stalled = this.lastTickAt > 0 && now - this.lastTickAt > 2 * this.opts.intervalMs;
    this.lastTickAt = now;
    if (this.stopped || !this.child) return;
    // Our own event loop was blocked: the tool's output may be waiting unread. Judge next tick.
    if (stalled) return;
    const limit = this.gotOutput ? this.opts.hangIntervals * this.opts.intervalMs : this.opts.startupGraceMs;
    const silent = now - this.lastOutputAt;
    if (silent > limit) {
      const child = this.child;
      this.child = null;
      killTree(child);
      this.outage(`nvidia-smi stopped answering (no output for ${(silent / 1000).toFixed(1)} s); restarting it.`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.restartTimer = this.settleTimer = null;
    const child = this.child;
    this.child = null;
    if (child) {
      killTree(child, 'SIGTERM');
      const hard = setTimeout(() => killTree(child, 'SIGKILL'), 1000);
      await this.exits.last();
      clearTimeout(hard);
    }
    await Promise.all(this.exits.toArray());
  }

  private spawnChild(): void {
    this.restartTimer = null;
    if (this.stopped) return;
    const args = [...queryArgs(SAMPLE_FIELDS), '-lms', String(this.opts.intervalMs)];
    const child = spawnTool(this.opts.file, args, this.opts.env);
    this.child = child;
    this.buf = '';
    this.pending.clear();
    this.errLines = [];
    this.gotOutput = false;
    this.spawnedAt = this.lastOutputAt = Date.now();
    this.opts.log?.debug(`started nvidia-smi -lms ${this.opts.intervalMs} (pid ${child.pid ?? '?'})`);

    this.exits.push(
      new Promise<void>((resolve) => {
        let ended = false;
        const end = (reason: string) => {
          if (ended) return;
          ended = true;
          resolve();
          if (this.child === child) {
            this.child = null;
            this.outage(reason);
          }
        };
        child.on('error', (err) => end(`nvidia-smi could not be started: ${err.message}.`));
        child.on('exit', (code, signal) => {
          const how = code !== null ? `exited with code ${code}` : `was killed (${signal})`;
          end(`nvidia-smi ${how}${this.errLines.length ? `: ${this.errLines.join(' ')}` : ''}; restarting it.`);
        });
      }),
    );

    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.onData(child, chunk));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split(/\r?\n/)) if (line.trim()) this.noteError(line.trim());
    });
  }

  private onData(child: ChildProcess, chunk: string): void {
    if (child !== this.child) return;
    this.lastOutputAt = Date.now();
    this.gotOutput = true;
    this.buf += chunk;
    if (this.buf.length > 1_000_000) this.buf = this.buf.slice(-10_000); // a runaway line
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (line) this.onLine(line);
    }
    // Lines of one frame come together; flush what we have if the rest does not follow shortly.
    if (this.pending.size && !this.settleTimer) {
      this.settleTimer = setTimeout(() => this.flush(), Math.min(50, Math.max(5, this.opts.intervalMs / 4)));
    }
  }

  private onLine(line: string): void {
    const dev = parseSampleLine(line);
    if (!dev) {
      // nvidia-smi reports failures in-band ("Unable to determine the device handle …").
      this.noteError(line);
      this.opts.log?.debug(`nvidia-smi: ${line.slice(0, 300)}`);
      return;
    }
    if (this.pending.has(dev.index)) this.flush(); // a new frame began
    this.pending.set(dev.index, dev);
    if (this.expected && this.pending.size >= this.expected) this.flush();
  }

  private noteError(line: string): void {
    if (this.errLines.length < 2) this.errLines.push(line.slice(0, 300));
  }

  private flush(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    if (!this.pending.size) return;
    const devices = [...this.pending.values()].sort((a, b) => a.index - b.index);
    this.pending.clear();
    this.errLines = [];
    this.expected = Math.max(this.expected, devices.length);
    if (Date.now() - this.spawnedAt >= 10 * this.opts.intervalMs) this.attempts = 0;
    this.events.frame(devices);
  }

  private outage(reason: string): void {
    this.pending.clear();
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = null;
    if (this.stopped) return;
    this.attempts += 1;
    const delay = backoffDelay(this.opts.backoff, this.attempts);
    // The first failure in a row is news; the retries of a lasting outage are not.
    const line = `${reason} Next start in ${delay} ms (attempt ${this.attempts}).`;
    if (this.attempts === 1) this.opts.log?.warn(line);
    else this.opts.log?.debug(line);
    this.events.down(reason);
    this.restartTimer = setTimeout(() => this.spawnChild(), delay);
  }
}
