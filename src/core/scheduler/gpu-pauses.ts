// Serving per GPU, on a rig with more than one: the owner gives one GPU back (a game on it), another
// program's work on one GPU pauses only that one, and the models placed on it (engines/gpu-placement.ts) are
// held while the others serve. The rig-wide pause (pause.ts) stays what the owner's switch and the schedule
// use; this one never pauses a GPU it was not told about.
import { EventEmitter } from 'node:events';
import type { GpuDeviceSample, GpuProcess, GpuServingCause, GpuServingState } from '../../shared/types';
import type { Logger } from '../base/log';
import { DEFAULT_GPU_BUSY, GpuBusyDetector, type GpuBusyThresholds } from './gpu-busy';

/** One cause set or cleared on one GPU ('cause' event): recorded in the ledger and logged with its code. */
export interface GpuCauseChange {
  gpu: number;
  cause: GpuServingCause;
  active: boolean;
  reason: string;
  at: number;
  /** gpu_pause_<cause> or gpu_resume_<cause>. */
  code: string;
}

export interface GpuPausesOptions {
  now?: () => number;
  gpu?: Partial<GpuBusyThresholds>;
  /** How many of our requests run now on a GPU: its utilisation only counts as someone else's when this is 0. */
  inFlightOn?: (gpu: number) => number;
  log?: Logger;
}

/** The order a GPU paused for several reasons is shown under: the owner's word first. */
const ORDER: readonly GpuServingCause[] = ['given_back', 'gpu_hot', 'gpu_busy', 'schedule'];

export class GpuPauses extends EventEmitter {
  private readonly now: () => number;
  private readonly thresholds: GpuBusyThresholds;
  private readonly inFlightOn: (gpu: number) => number;
  private readonly log?: Logger;
  private known: number[] = [];
  private readonly causes = new Map<number, Map<GpuServingCause, { reason: string; since: number }>>();
  private readonly detectors = new Map<number, GpuBusyDetector>();
  private lastKey = '';

  constructor(opts: GpuPausesOptions = {}) {
    super();
    this.now = opts.now ?? Date.now;
    this.thresholds = { ...DEFAULT_GPU_BUSY, ...opts.gpu };
    this.inFlightOn = opts.inFlightOn ?? (() => 0);
    this.log = opts.log;
  }

  /** The GPUs detection found (indexes). A cause on a GPU that is gone is dropped; one given back is kept by the caller. */
  setKnown(indexes: readonly number[]): void {
    this.known = [...new Set(indexes)].sort((a, b) => a - b);
    for (const gpu of [...this.causes.keys()]) if (!this.known.includes(gpu)) this.causes.delete(gpu);
    this.publish();
  }

  /** Per-GPU serving applies only where there is a choice: two GPUs or more. */
  get perGpu(): boolean {
    return this.known.length > 1;
  }

  /** The owner's chosen GPUs: every one not listed serves; unknown indexes are ignored. */
  setGivenBack(indexes: readonly number[], reason = 'Given back by the owner'): void {
    for (const gpu of this.known) this.set(gpu, 'given_back', indexes.includes(gpu) ? reason : undefined);
  }

  /** Another program's work on one GPU, fed with that GPU's processes and sample (the busy watch does). */
  updateGpu(gpu: number, procs: readonly GpuProcess[], sample: GpuDeviceSample | undefined): void {
    if (!this.known.includes(gpu)) return;
    let d = this.detectors.get(gpu);
    if (!d) this.detectors.set(gpu, (d = new GpuBusyDetector(this.thresholds)));
    const devices = sample ? [sample] : [];
    const v = d.update(procs, { ts: 0, available: sample !== undefined, devices, cpuPercent: null, ramUsedMb: null, ramTotalMb: null }, this.inFlightOn(gpu));
    this.set(gpu, 'gpu_busy', v.busy ? `GPU ${gpu}: ${v.reason ?? 'busy with other work'}` : undefined);
  }

  /** The busy watch stopped (the owner switched it off): what it paused is lifted. */
  clearBusy(): void {
    this.detectors.clear();
    for (const gpu of this.known) this.set(gpu, 'gpu_busy', undefined);
  }

  /** The owner's schedule windows that name GPUs: the GPUs paused now, each with its window in words. */
  setScheduled(byGpu: ReadonlyMap<number, string>): void {
    for (const gpu of this.known) this.set(gpu, 'schedule', byGpu.get(gpu));
  }

  /** The guard rails on one GPU: over its ceiling pauses it; undefined: cooled. */
  setHot(gpu: number, reason: string | undefined): void {
    if (this.known.includes(gpu) || reason === undefined) this.set(gpu, 'gpu_hot', reason);
  }

  isPaused(gpu: number): boolean {
    return (this.causes.get(gpu)?.size ?? 0) > 0;
  }

  /** The indexes of the GPUs paused now. */
  pausedGpus(): number[] {
    return this.known.filter((g) => this.isPaused(g));
  }

  state(): GpuServingState[] {
    return this.known.map((index) => {
      const c = this.causes.get(index);
      const cause = ORDER.find((k) => c?.has(k));
      const a = cause ? c?.get(cause) : undefined;
      return cause && a ? { index, serving: false, cause, reason: a.reason, since: a.since } : { index, serving: true };
    });
  }

  close(): void {
    this.removeAllListeners();
  }

  private set(gpu: number, cause: GpuServingCause, reason: string | undefined): void {
    let c = this.causes.get(gpu);
    const current = c?.get(cause);
    if (reason === undefined) {
      if (!current || !c) return;
      c.delete(cause);
      if (c.size === 0) this.causes.delete(gpu);
      this.change({ gpu, cause, active: false, reason: current.reason, at: this.now(), code: `gpu_resume_${cause}` });
    } else if (current) {
      current.reason = reason;
    } else {
      if (!c) this.causes.set(gpu, (c = new Map()));
      const at = this.now();
      c.set(cause, { reason, since: at });
      this.change({ gpu, cause, active: true, reason, at, code: `gpu_pause_${cause}` });
    }
    this.publish();
  }

  private change(c: GpuCauseChange): void {
    const line = c.active ? `GPU ${c.gpu} paused (${c.cause}): ${c.reason}` : `GPU ${c.gpu} serves again (${c.cause} cleared)`;
    this.log?.info(line, { code: c.code, gpu: c.gpu });
    this.emit('cause', c);
  }

  private publish(): void {
    const key = JSON.stringify(this.state().map((s) => [s.index, s.cause ?? '', s.reason ?? '']));
    if (key === this.lastKey) return;
    this.lastKey = key;
    this.emit('change', this.state());
  }
}
