// The guard rails' decisions, sample by sample: two samples over a ceiling throttle, three more (or one far
// over) pause, three clearly under resume; hovering at the ceiling does not flap; a GPU with no figure changes
// nothing; switching the rails off lifts what they did.
import { describe, expect, it } from 'vitest';
import type { GpuSample } from '../../../src/shared/types';
import { GuardRails } from '../../../src/core/scheduler/guard-rails';
import { pauseMessage } from '../../../src/core/scheduler/pause-binding';

const sample = (...temps: Array<number | null>): GpuSample => ({
  ts: 0,
  available: true,
  devices: temps.map((t, index) => ({
    index,
    utilization: 0.5,
    vramUsedMb: 1000,
    vramTotalMb: 24_000,
    temperatureC: t,
    powerW: 200,
    powerLimitW: 350,
    fanPercent: 50,
  })),
  cpuPercent: null,
  ramUsedMb: null,
  ramTotalMb: null,
});

/** Feeds the samples; the codes of the decisions, in order. */
function run(r: GuardRails, temps: Array<Array<number | null>>): string[] {
  return temps.flatMap((t) => {
    const d = r.update(sample(...t));
    return d ? [d.code] : [];
  });
}

describe('guard rails', () => {
  it('over for two samples throttles, three more pause, three clearly under resume', () => {
    const r = new GuardRails({ temperatureC: 85 });
    expect(run(r, [[80], [86]])).toEqual([]);
    expect(run(r, [[86]])).toEqual(['gpu_hot_throttle']);
    expect(r.current).toBe('throttled');
    expect(run(r, [[86], [86]])).toEqual([]);
    expect(run(r, [[87]])).toEqual(['gpu_hot_pause']);
    // Under the ceiling but within the margin: still paused.
    expect(run(r, [[83], [82], [81], [83]])).toEqual([]);
    expect(r.current).toBe('paused');
    expect(run(r, [[80], [79]])).toEqual([]);
    expect(run(r, [[78]])).toEqual(['gpu_cool_resume']);
    expect(r.current).toBe('ok');
  });

  it('far over the ceiling while throttled pauses at once; the reason names the GPU and the figures', () => {
    const r = new GuardRails({ temperatureC: 85 });
    run(r, [[86], [86]]);
    const d = r.update(sample(70, 91));
    expect(d).toMatchObject({ state: 'paused', code: 'gpu_hot_pause' });
    expect(d!.reason).toContain('GPU 1 at 91 °C (ceiling 85 °C)');
  });

  it('hovering at the ceiling (one sample at it, one under, by turns) never throttles', () => {
    const r = new GuardRails({ temperatureC: 85 });
    expect(run(r, [[85], [84], [85], [84], [85], [84]])).toEqual([]);
    expect(r.current).toBe('ok');
  });

  it('power: over the watt ceiling throttles; a GPU with no figures changes nothing', () => {
    const r = new GuardRails({ powerW: 150 });
    expect(run(r, [[null], [null]])).toEqual(['gpu_hot_throttle']); // power 200 W > 150 W on every sample
    const t = new GuardRails({ temperatureC: 85 });
    expect(run(t, [[null], [null], [null], [null], [null], [null]])).toEqual([]);
    expect(t.current).toBe('ok');
  });

  it('off (no ceiling) decides nothing; switched off while paused, serving is back', () => {
    expect(run(new GuardRails({}), [[99], [99], [99], [99], [99]])).toEqual([]);
    const r = new GuardRails({ temperatureC: 85 });
    run(r, [[90], [90], [96]]);
    expect(r.current).toBe('paused');
    expect(r.setLimits({ temperatureC: 0 })).toMatchObject({ state: 'ok', code: 'gpu_cool_resume' });
  });

  it("a client refused during a hot pause is told the GPU is cooling, nothing of the owner's ceiling", () => {
    const text = pauseMessage({ paused: true, cause: 'gpu_hot', reason: 'GPU 0 at 91 °C (ceiling 85 °C): serving paused until it cools' });
    expect(text).toContain('cooling down');
    expect(text).not.toMatch(/°C|ceiling/);
  });
});
