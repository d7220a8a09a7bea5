// GpuSampler: live GPU and host metrics for the UI and the heartbeat, every interval (1 s).
// NVIDIA: one streaming nvidia-smi (long-running mode). AMD: amd-smi/rocm-smi spawned per
// sample. No GPU: CPU and RAM only. While a tool is down, every sample says so (available:false
// with the reason): a frozen last value is never passed off as live.
import { EventEmitter } from 'node:events';
import type { GpuDeviceSample, GpuSample } from '../../shared/types';
import type { Logger } from '../base/log';
import { HostStats } from './host-stats';
import { NvidiaStreamSource } from './nvidia-stream';
import { Ring } from '../../shared/ring';
import { findOnPath } from './run-tool';
import { DEFAULT_BACKOFF, type Backoff, type SampleSource } from './sample-source';
import { amdSmiReader, nvidiaPollReader, rocmSmiReader, ToolPollSource, type PollReader } from './tool-poll';

export type SamplerMode = 'long-running' | 'spawn';

export interface GpuSamplerOptions {
  intervalMs?: number;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
  /** NVIDIA only: one streaming nvidia-smi (default) or one nvidia-smi per sample. */
  mode?: SamplerMode;
  /** Restart backoff of a dead or hung tool (default 1 s doubling to 30 s). */
  backoff?: Backoff;
  /** A streaming tool silent for more than this many intervals is hung (default 3). */
  hangIntervals?: number;
  /** Silence allowed before a streaming tool's first line (default max(3 intervals, 5 s)). */
  startupGraceMs?: number;
}

/** 60 minutes at 1 Hz. */
const MAX_HISTORY = 3600;

export class GpuSampler extends EventEmitter {
  readonly intervalMs: number;
  private readonly env: NodeJS.ProcessEnv;
  private readonly log?: Logger;
  private readonly mode: SamplerMode;
  private readonly backoff: Backoff;
  private readonly hangIntervals: number;
  private readonly startupGraceMs: number;
  private readonly ring: Ring<GpuSample>;
  private host: HostStats | null = null;
  private src: SampleSource | null = null;
  private timer: NodeJS.Timeout | null = null;
  private downReason: string | null = null;
  private knownIndexes: number[] = [];
  private lastPushAt = 0;

  constructor(opts: GpuSamplerOptions = {}) {
    super();
    this.intervalMs = Math.max(10, Math.round(opts.intervalMs ?? 1000));
    this.env = opts.env ?? process.env;
    this.log = opts.log;
    this.mode = opts.mode ?? 'long-running';
    this.backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.hangIntervals = opts.hangIntervals ?? 3;
    this.startupGraceMs = opts.startupGraceMs ?? Math.max(3 * this.intervalMs, 5000);
    this.ring = new Ring(Math.min(MAX_HISTORY, Math.ceil(3_600_000 / this.intervalMs)));
  }

  /** Which reader is in use: 'nvidia-smi -lms', 'amd-smi', … or 'none' (no GPU tool). */
  get sourceName(): string {
    return this.src?.name ?? 'none';
  }

  get running(): boolean {
    return this.timer !== null;
  }

  start(): void {
    if (this.timer) return;
    this.host = new HostStats();
    this.downReason = null;
    this.src = this.pickSource();
    this.log?.info(`GPU sampler started: ${this.sourceName}, every ${this.intervalMs} ms`);
    this.src?.start();
    this.timer = setInterval(() => this.onTick(), this.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const src = this.src;
    this.src = null;
    await src?.stop();
  }

  latest(): GpuSample | null {
    return this.ring.last() ?? null;
  }

  /** Samples of the last `minutes` minutes, oldest first (bounded to 60 min at 1 Hz). */
  history(minutes: number): GpuSample[] {
    const since = Date.now() - minutes * 60_000;
    return this.ring.toArray().filter((s) => s.ts >= since);
  }

  private pickSource(): SampleSource | null {
    const events = { frame: (d: GpuDeviceSample[]) => this.onFrame(d), down: (r: string) => this.onDown(r) };
    const pollTimeout = Math.max(3 * this.intervalMs, 4000);
    const nvidia = findOnPath('nvidia-smi', this.env);
    if (nvidia && this.mode === 'long-running') {
      return new NvidiaStreamSource(
        {
          file: nvidia,
          env: this.env,
          intervalMs: this.intervalMs,
          backoff: this.backoff,
          hangIntervals: this.hangIntervals,
          startupGraceMs: this.startupGraceMs,
          log: this.log,
        },
        events,
      );
    }
    const readers: PollReader[] = [];
    if (nvidia) readers.push(nvidiaPollReader(nvidia));
    else {
      const amd = findOnPath('amd-smi', this.env);
      const rocm = findOnPath('rocm-smi', this.env);
      if (amd) readers.push(amdSmiReader(amd));
      if (rocm) readers.push(rocmSmiReader(rocm));
    }
    if (!readers.length) return null;
    return new ToolPollSource({ readers, env: this.env, timeoutMs: pollTimeout, backoff: this.backoff, log: this.log }, events);
  }

  private onTick(): void {
    const now = Date.now();
    if (!this.src) {
      this.push({ available: true, devices: [] }); // no GPU: host metrics stay live
      return;
    }
    this.src.tick(now);
    // While the tool is down, one "unavailable" sample per interval (unless one was just pushed).
    if (this.downReason !== null && Date.now() - this.lastPushAt >= this.intervalMs / 2) {
      this.push(this.unavailable(this.downReason));
    }
  }

  private onFrame(devices: GpuDeviceSample[]): void {
    if (!this.timer) return;
    if (this.downReason !== null) this.log?.info(`GPU metrics available again (${this.sourceName})`);
    this.downReason = null;
    this.knownIndexes = devices.map((d) => d.index);
    this.push({ available: true, devices });
  }

  private onDown(reason: string): void {
    if (!this.timer) return;
    this.downReason = reason;
    this.push(this.unavailable(reason));
  }

  private unavailable(reason: string): Pick<GpuSample, 'available' | 'reason' | 'devices'> {
    return {
      available: false,
      reason,
      devices: this.knownIndexes.map((index) => ({
        index,
        utilization: null,
        vramUsedMb: null,
        vramTotalMb: null,
        temperatureC: null,
        powerW: null,
        powerLimitW: null,
        fanPercent: null,
      })),
    };
  }

  private push(part: Pick<GpuSample, 'available' | 'reason' | 'devices'>): void {
    const host = this.host?.read();
    const sample: GpuSample = {
      ts: Date.now(),
      ...part,
      cpuPercent: host?.cpuPercent ?? null,
      ramUsedMb: host?.ramUsedMb ?? null,
      ramTotalMb: host?.ramTotalMb ?? null,
    };
    this.lastPushAt = sample.ts;
    this.ring.push(sample);
    this.emit('sample', sample);
  }
}
