// Why serving is paused: the owner's switch, a GPU over its ceiling, another program using the GPU, or the
// owner's schedule.
// Manual wins over the others and is only ever lifted by the owner; the GPU and schedule causes
// lift themselves when their condition clears.
import { EventEmitter } from 'node:events';
import type { GpuProcess, GpuSample, PauseState } from '../../shared/types';
import type { Logger } from '../base/log';
import { DEFAULT_GPU_BUSY, GpuBusyDetector, type GpuBusyThresholds } from './gpu-busy';
import { activeWindow, describeWindow, parseSchedule, type PauseWindow } from './pause-schedule';

export interface PauseControllerOptions {
  /** Clock (epoch ms); tests inject a fake one. */
  now?: () => number;
  gpu?: Partial<GpuBusyThresholds>;
  /** How often the schedule is checked (default 30 s). */
  scheduleCheckMs?: number;
  /** How many of our requests run now: GPU utilisation only counts as someone else's when this is 0. */
  engineInFlight?: () => number;
  log?: Logger;
  /**
   * Windows that name GPUs act per GPU on a rig with several (gpu-pauses.ts): `perGpu` says whether it has
   * several now, `apply` is given the GPUs paused by such windows. Without it, or with one GPU, every window is
   * the rig's.
   */
  gpuSchedule?: { perGpu: () => boolean; apply: (byGpu: ReadonlyMap<number, string>) => void };
}

type Cause = NonNullable<PauseState['cause']>;

/** One cause set or cleared ('cause' event): each is a decision the serving feature records with its code. */
export interface PauseCauseChange {
  cause: Cause;
  /** true: the cause now pauses; false: it was cleared. */
  active: boolean;
  reason: string;
  at: number;
}

interface Active {
  reason: string;
  since: number;
}

export class PauseController extends EventEmitter {
  private readonly now: () => number;
  private detector: GpuBusyDetector;
  private readonly thresholds: GpuBusyThresholds;
  private readonly scheduleCheckMs: number;
  private readonly engineInFlight: () => number;
  private readonly log?: Logger;
  private readonly gpuSchedule?: PauseControllerOptions['gpuSchedule'];
  private readonly active: Partial<Record<Cause, Active>> = {};
  private windows: PauseWindow[] = [];
  private timer?: NodeJS.Timeout;
  private last: PauseState = { paused: false };

  constructor(opts: PauseControllerOptions = {}) {
    super();
    this.now = opts.now ?? Date.now;
    this.thresholds = { ...DEFAULT_GPU_BUSY, ...opts.gpu };
    this.detector = new GpuBusyDetector(this.thresholds);
    this.scheduleCheckMs = opts.scheduleCheckMs ?? 30_000;
    this.engineInFlight = opts.engineInFlight ?? (() => 0);
    this.log = opts.log;
    this.gpuSchedule = opts.gpuSchedule;
  }

  /** The owner pauses serving. Stays paused until resumeManual(), whatever else happens. */
  pauseManual(reason = 'Paused by the owner'): void {
    this.set('manual', reason);
  }

  resumeManual(): void {
    this.set('manual', undefined);
  }

  /** Feeds the GPU's current process list (and optionally its latest sample). */
  updateGpuProcesses(procs: GpuProcess[], sample?: GpuSample): void {
    const v = this.detector.update(procs, sample, this.engineInFlight());
    this.set('gpu_busy', v.busy ? (v.reason ?? 'The GPU is busy with other work') : undefined);
  }

  /** The guard rails (guard-rails.ts): a GPU over its temperature or power ceiling pauses; undefined: cooled. */
  setHot(reason: string | undefined): void {
    this.set('gpu_hot', reason);
  }

  /** The rig turned out to have several GPUs: a busy or hot GPU pauses itself from now on (gpu-pauses.ts), not the rig. */
  clearGpuCauses(): void {
    this.detector = new GpuBusyDetector(this.thresholds);
    this.set('gpu_busy', undefined);
    this.set('gpu_hot', undefined);
  }

  /** Replaces the pause schedule (validated; throws with a clear message) and checks it at once. */
  setSchedule(windows: unknown): void {
    this.windows = parseSchedule(windows);
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.windows.length > 0) {
      this.timer = setInterval(() => this.evaluateSchedule(), this.scheduleCheckMs);
      this.timer.unref();
    }
    this.evaluateSchedule();
  }

  schedule(): PauseWindow[] {
    return this.windows.map((w) => ({ ...w, days: [...w.days] }));
  }

  /** Checks the schedule against the clock now (the timer calls this; tests may too). */
  evaluateSchedule(): void {
    const now = this.now();
    const perGpu = this.gpuSchedule?.perGpu() ?? false;
    const rig = perGpu ? this.windows.filter((w) => !w.gpus) : this.windows;
    const w = activeWindow(rig, now);
    this.set('schedule', w ? `Paused by your schedule (${describeWindow(w)})` : undefined);
    if (!this.gpuSchedule) return;
    const byGpu = new Map<number, string>();
    if (perGpu) {
      for (const g of this.windows.filter((x) => x.gpus)) {
        if (!activeWindow([g], now)) continue;
        for (const gpu of g.gpus ?? []) if (!byGpu.has(gpu)) byGpu.set(gpu, `Paused by your schedule (${describeWindow(g)})`);
      }
    }
    this.gpuSchedule.apply(byGpu);
  }

  state(): PauseState {
    return { ...this.last };
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.removeAllListeners();
  }

  private set(cause: Cause, reason: string | undefined): void {
    const current = this.active[cause];
    if (reason === undefined) {
      if (!current) return;
      delete this.active[cause];
      this.log?.info(`Pause cause cleared: ${cause}`, { code: `resume_${cause}` });
      this.emit('cause', { cause, active: false, reason: current.reason, at: this.now() } satisfies PauseCauseChange);
    } else if (current) {
      current.reason = reason;
    } else {
      const since = this.now();
      this.active[cause] = { reason, since };
      this.log?.info(`Pause cause set: ${cause} — ${reason}`, { code: `pause_${cause}` });
      this.emit('cause', { cause, active: true, reason, at: since } satisfies PauseCauseChange);
    }
    this.publish();
  }

  private publish(): void {
    const cause = (['manual', 'gpu_hot', 'gpu_busy', 'schedule'] as const).find((c) => this.active[c]);
    const a = cause ? this.active[cause] : undefined;
    const next: PauseState = cause && a ? { paused: true, cause, reason: a.reason, since: a.since } : { paused: false };
    if (next.paused === this.last.paused && next.cause === this.last.cause && next.reason === this.last.reason) return;
    this.last = next;
    this.emit('change', this.state());
  }
}
