// Guard rails for the hardware: a temperature ceiling and a power ceiling, read from each GPU sample, with
// hysteresis so a card hovering at its ceiling does not flap. Over a ceiling for two samples in a row: fewer
// requests at once (each engine's limit halved). Still over after three more, or far over (5 °C or 10 %
// past): paused. Back only once every GPU is clearly under (5 °C, or 10 % of the power ceiling) for three
// samples in a row. A GPU that reports no figure is never taken as cool or hot: its missing figure changes
// nothing. The decision is the caller's to apply (the scheduler's throttle, the pause controller's cause).
import type { GpuSample } from '../../shared/types';

export interface RailLimits {
  /** °C; 0 or absent: no temperature ceiling. */
  temperatureC?: number;
  /** W per GPU; 0 or absent: no power ceiling. */
  powerW?: number;
}

export type RailState = 'ok' | 'throttled' | 'paused';

/** Stable codes of the rails' decisions (log lines, alerts, the console). */
export type RailCode = 'gpu_hot_throttle' | 'gpu_hot_pause' | 'gpu_cool_resume';

export interface RailDecision {
  state: RailState;
  code: RailCode;
  /** What was seen, in plain words ("GPU 0 at 91 °C, over its 85 °C ceiling"). */
  reason: string;
  /** The GPU nearest (or furthest past) its ceiling when the decision was made. */
  gpu?: number;
}

/** Samples in a row over a ceiling before requests are throttled. */
const OVER_TO_THROTTLE = 2;
/** Further samples over while throttled before serving pauses. */
const OVER_TO_PAUSE = 3;
/** Samples in a row clearly under before serving is back to normal. */
const UNDER_TO_RESUME = 3;
const TEMP_MARGIN_C = 5;
const POWER_MARGIN = 0.1;

export class GuardRails {
  private state: RailState = 'ok';
  private over = 0;
  private under = 0;

  constructor(private limits: RailLimits) {}

  get current(): RailState {
    return this.state;
  }

  /** Whether any ceiling is set. */
  get enabled(): boolean {
    return (this.limits.temperatureC ?? 0) > 0 || (this.limits.powerW ?? 0) > 0;
  }

  /** New ceilings (the owner's setting); a rail switched off lets serving go back to normal now. */
  setLimits(limits: RailLimits): RailDecision | undefined {
    this.limits = limits;
    if (this.enabled || this.state === 'ok') return undefined;
    this.state = 'ok';
    this.over = this.under = 0;
    return { state: 'ok', code: 'gpu_cool_resume', reason: 'the GPU guard rails were switched off' };
  }

  /** Reads one sample; answers the decision when the state changes. */
  update(sample: GpuSample): RailDecision | undefined {
    if (!this.enabled || !sample.available) return undefined;
    const hot = this.hottest(sample);
    if (hot === undefined) return undefined;
    if (hot.over) {
      this.under = 0;
      this.over++;
      if (this.state === 'ok' && this.over >= OVER_TO_THROTTLE)
        return this.move('throttled', 'gpu_hot_throttle', `${hot.text}: fewer requests at once until it cools`, hot.gpu);
      if (this.state === 'throttled' && (hot.far || this.over >= OVER_TO_PAUSE))
        return this.move('paused', 'gpu_hot_pause', `${hot.text}: serving paused until it cools`, hot.gpu);
      return undefined;
    }
    this.over = 0;
    if (!hot.clear) {
      this.under = 0;
      return undefined;
    }
    this.under++;
    if (this.state !== 'ok' && this.under >= UNDER_TO_RESUME)
      return this.move('ok', 'gpu_cool_resume', `every GPU is back under its ceiling (${hot.text})`, hot.gpu);
    return undefined;
  }

  private move(state: RailState, code: RailCode, reason: string, gpu: number): RailDecision {
    this.state = state;
    this.over = 0;
    this.under = 0;
    return { state, code, reason, gpu };
  }

  /** The GPU nearest (or furthest past) a ceiling: over, far over, clearly under, and in words. */
  private hottest(sample: GpuSample): { over: boolean; far: boolean; clear: boolean; text: string; gpu: number } | undefined {
    const t = this.limits.temperatureC ?? 0;
    const p = this.limits.powerW ?? 0;
    let worst: { ratio: number; over: boolean; far: boolean; clear: boolean; text: string; gpu: number } | undefined;
    let allClear = true;
    let known = false;
    for (const d of sample.devices) {
      const checks: Array<{ ratio: number; over: boolean; far: boolean; clear: boolean; text: string; gpu: number }> = [];
      if (t > 0 && d.temperatureC !== null)
        checks.push({
          gpu: d.index,
          ratio: d.temperatureC / t,
          over: d.temperatureC >= t,
          far: d.temperatureC >= t + TEMP_MARGIN_C,
          clear: d.temperatureC <= t - TEMP_MARGIN_C,
          text: `GPU ${d.index} at ${d.temperatureC} °C (ceiling ${t} °C)`,
        });
      if (p > 0 && d.powerW !== null)
        checks.push({
          gpu: d.index,
          ratio: d.powerW / p,
          over: d.powerW >= p,
          far: d.powerW >= p * (1 + POWER_MARGIN),
          clear: d.powerW <= p * (1 - POWER_MARGIN),
          text: `GPU ${d.index} drawing ${Math.round(d.powerW)} W (ceiling ${p} W)`,
        });
      for (const c of checks) {
        known = true;
        if (!c.clear) allClear = false;
        if (!worst || c.ratio > worst.ratio) worst = c;
      }
    }
    if (!known || !worst) return undefined;
    return { over: worst.over, far: worst.far, clear: allClear, text: worst.text, gpu: worst.gpu };
  }
}
