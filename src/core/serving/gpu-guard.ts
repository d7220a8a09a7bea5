// The guard rails at work: every GPU sample goes through GuardRails (scheduler/guard-rails.ts); its
// decisions are applied here — throttled: each engine serves half its limit; paused: the pause controller's
// 'gpu_hot' cause (running requests finish, new ones get 429); cool again: both lifted. Each decision is
// recorded in the ledger (rail_events, before it is applied) and logged with its stable code; the pause raises the "paused by itself" alert (alerts/watch.ts).
import type { EventEmitter } from 'node:events';
import type { GpuSample } from '../../shared/types';
import type { Logger } from '../base/log';
import { GuardRails, type RailDecision, type RailLimits } from '../scheduler/guard-rails';
import type { PauseController } from '../scheduler/pause';
import type { GpuPauses } from '../scheduler/gpu-pauses';
import type { Scheduler } from '../scheduler/scheduler';

/** The share of each engine's limit served while a GPU is over its ceiling. */
export const THROTTLED_SHARE = 0.5;

export interface GpuGuardDeps {
  /** The GPU sampler ('sample' events); absent when GPU sampling is off (then the rails do nothing). */
  sampler?: Pick<EventEmitter, 'on' | 'off'>;
  scheduler: Pick<Scheduler, 'setThrottle'>;
  pause: Pick<PauseController, 'setHot'>;
  /** On a rig with several GPUs, a GPU over its ceiling pauses that GPU only (its models held; the others serve). */
  gpus?: Pick<GpuPauses, 'perGpu' | 'setHot'>;
  /** The owner's ceilings (console settings, else config.toml), read on start and on apply(). */
  limits: () => RailLimits;
  log: Logger;
  /** Each decision, before it is applied: into the ledger (rail-record.ts). */
  record?: (r: RailDecision) => void;
}

export class GpuGuard {
  private readonly rails: GuardRails;
  /** One set of rails per GPU, on a rig with several (each GPU's own hysteresis). */
  private readonly perGpuRails = new Map<number, GuardRails>();
  private rigHot = false;
  private readonly onSample = (s: GpuSample): void => {
    if (this.d.gpus?.perGpu) this.perGpu(s);
    else this.decide(this.rails.update(s));
  };
  private listening = false;

  constructor(private readonly d: GpuGuardDeps) {
    this.rails = new GuardRails(d.limits());
  }

  get state(): GuardRails['current'] {
    return this.rails.current;
  }

  start(): void {
    if (this.listening || !this.d.sampler) return;
    this.d.sampler.on('sample', this.onSample);
    this.listening = true;
  }

  stop(): void {
    this.d.sampler?.off('sample', this.onSample);
    this.listening = false;
  }

  /** The owner changed a ceiling: read now (a rail switched off lifts what it did). */
  apply(): void {
    this.decide(this.rails.setLimits(this.d.limits()));
    for (const [gpu, rails] of this.perGpuRails) this.decideOn(gpu, rails.setLimits(this.d.limits()));
  }

  /** Each GPU through its own rails: throttling stays rig-wide (any GPU hot), a pause holds that GPU only. */
  private perGpu(s: GpuSample): void {
    if (!s.available) return;
    for (const device of s.devices) {
      let rails = this.perGpuRails.get(device.index);
      if (!rails) this.perGpuRails.set(device.index, (rails = new GuardRails(this.d.limits())));
      this.decideOn(device.index, rails.update({ ...s, devices: [device] }));
    }
  }

  private decideOn(gpu: number, r: RailDecision | undefined): void {
    if (!r) return;
    const anyHot = [...this.perGpuRails.values()].some((x) => x.current !== 'ok');
    // The ledger's throttle span is the rig's (one GPU cooling must not end it while another is hot): a row when
    // the first GPU gets hot and when the last one cools; each GPU's pause is its own row (gpu_pause_gpu_hot).
    if (anyHot !== this.rigHot) {
      this.rigHot = anyHot;
      this.d.record?.({ ...r, gpu, ...(anyHot ? { state: 'throttled', code: 'gpu_hot_throttle' } : { state: 'ok', code: 'gpu_cool_resume' }) });
    }
    this.d.scheduler.setThrottle(anyHot ? THROTTLED_SHARE : 1);
    this.d.gpus?.setHot(gpu, r.state === 'paused' ? r.reason : undefined);
    const line = `guard rails: ${r.reason}`;
    if (r.state === 'ok') this.d.log.info(line, { code: r.code, gpu });
    else this.d.log.warn(line, { code: r.code, gpu });
  }

  private decide(r: RailDecision | undefined): void {
    if (!r) return;
    this.d.record?.(r);
    this.d.scheduler.setThrottle(r.state === 'ok' ? 1 : THROTTLED_SHARE);
    this.d.pause.setHot(r.state === 'paused' ? r.reason : undefined);
    const line = `guard rails: ${r.reason}`;
    if (r.state === 'ok') this.d.log.info(line, { code: r.code });
    else this.d.log.warn(line, { code: r.code });
  }
}
