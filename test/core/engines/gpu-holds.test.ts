// Per-GPU serving: the GPU pauses (given back, busy with a game, hot), where each model runs, and which models
// are held, against the real scheduler (a held model is refused 'paused' while its neighbour is admitted).
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { GpuGuard } from '../../../src/core/serving/gpu-guard';
import type { RailDecision } from '../../../src/core/scheduler/guard-rails';
import { GpuChoiceError, GpuHolds, managedGpus } from '../../../src/core/engines/gpu-holds';
import { GpuPauses, type GpuCauseChange } from '../../../src/core/scheduler/gpu-pauses';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { SchedulerRejection } from '../../../src/core/scheduler/types';
import type { ServeSpec } from '../../../src/core/managed/spec';
import type { GpuProcess, GpuSample } from '../../../src/shared/types';

const ENGINE = 'http://127.0.0.1:8000';
const OTHER = 'http://127.0.0.1:8001';
const game: GpuProcess = { pid: 4242, name: 'game.exe', usedMemoryMb: 6000, isEngine: false };

let schedulers: Scheduler[] = [];
afterEach(() => {
  for (const s of schedulers) s.close();
  schedulers = [];
});

function rig(opts: { entries?: Record<string, { endpoint: string; gpus?: number[] }>; specs?: ServeSpec[]; models?: Array<{ id: string; url: string }> } = {}) {
  const scheduler = new Scheduler({}, undefined, { pace: false });
  schedulers.push(scheduler);
  const models = opts.models ?? [
    { id: 'a', url: ENGINE },
    { id: 'b', url: OTHER },
  ];
  for (const m of models) scheduler.setModel(m.id, [{ url: m.url, health: 'healthy' }]);
  let givenBack: number[] = [];
  const heldEngines: string[][] = [];
  const unloaded: string[][] = [];
  let announces = 0;
  const holds = new GpuHolds({
    registry: { all: () => models.map((m) => ({ id: m.id, endpoints: [{ url: m.url }] })) as never },
    scheduler,
    managed: {
      specs: () => opts.specs ?? [],
      setHeld: async (ids) => {
        heldEngines.push([...ids].sort());
      },
    },
    entries: () => opts.entries ?? {},
    givenBack: () => givenBack,
    saveGivenBack: (g) => {
      givenBack = g;
    },
    freeMemory: true,
    unloadOllama: async (ids) => {
      unloaded.push([...ids].sort());
    },
    announce: () => announces++,
    changed: () => undefined,
    log: { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined, child: () => undefined } as never,
  });
  return { holds, scheduler, heldEngines, unloaded, announces: () => announces, givenBack: () => givenBack };
}

async function outcome(s: Scheduler, model: string): Promise<string> {
  try {
    const lease = await s.admit(model, { requestId: `r-${model}-${Math.random()}`, source: 'local' });
    lease.release();
    return 'admitted';
  } catch (e) {
    if (e instanceof SchedulerRejection) return `${e.statusCode} ${e.reason}`;
    throw e;
  }
}

describe('GpuPauses', () => {
  it('does nothing per GPU on a rig with one GPU', () => {
    const p = new GpuPauses();
    p.setKnown([0]);
    expect(p.perGpu).toBe(false);
    p.setKnown([0, 1]);
    expect(p.perGpu).toBe(true);
  });

  it('pauses only the GPU a game uses, after three readings, and lets it serve after five clear ones', () => {
    const p = new GpuPauses();
    const causes: GpuCauseChange[] = [];
    p.on('cause', (c: GpuCauseChange) => causes.push(c));
    p.setKnown([0, 1]);
    for (let i = 0; i < 2; i++) p.updateGpu(0, [game], undefined);
    expect(p.pausedGpus()).toEqual([]);
    p.updateGpu(0, [game], undefined);
    p.updateGpu(1, [], undefined);
    expect(p.pausedGpus()).toEqual([0]);
    expect(p.state()[0]).toMatchObject({ index: 0, serving: false, cause: 'gpu_busy' });
    expect(p.state()[0]!.reason).toContain('game.exe');
    expect(p.state()[1]).toEqual({ index: 1, serving: true });
    for (let i = 0; i < 4; i++) p.updateGpu(0, [], undefined);
    expect(p.pausedGpus()).toEqual([0]);
    p.updateGpu(0, [], undefined);
    expect(p.pausedGpus()).toEqual([]);
    expect(causes.map((c) => `${c.gpu}:${c.code}`)).toEqual(['0:gpu_pause_gpu_busy', '0:gpu_resume_gpu_busy']);
  });

  it("shows the owner's word first when a GPU is paused for several reasons", () => {
    const p = new GpuPauses();
    p.setKnown([0, 1]);
    p.setHot(1, 'GPU 1 at 91 °C');
    p.setGivenBack([1]);
    expect(p.state()[1]).toMatchObject({ serving: false, cause: 'given_back' });
    p.setGivenBack([]);
    expect(p.state()[1]).toMatchObject({ serving: false, cause: 'gpu_hot' });
    p.setHot(1, undefined);
    expect(p.state()[1]).toEqual({ index: 1, serving: true });
  });

  it("counts a GPU's utilisation as another program's only while none of our requests runs", () => {
    let ours = 1;
    const p = new GpuPauses({ inFlightOn: () => ours });
    p.setKnown([0, 1]);
    const busy = { index: 0, utilization: 0.9, vramUsedMb: 1, vramTotalMb: 2, temperatureC: 50, powerW: null, powerLimitW: null, fanPercent: null };
    for (let i = 0; i < 5; i++) p.updateGpu(0, [], busy);
    expect(p.pausedGpus()).toEqual([]);
    ours = 0;
    for (let i = 0; i < 3; i++) p.updateGpu(0, [], busy);
    expect(p.state()[0]).toMatchObject({ cause: 'gpu_busy', reason: expect.stringContaining('90%') });
  });

  it('ignores GPUs it was not told about', () => {
    const p = new GpuPauses();
    p.setKnown([0, 1]);
    p.setGivenBack([7]);
    p.updateGpu(9, [game], undefined);
    expect(p.pausedGpus()).toEqual([]);
  });
});

describe('GpuHolds', () => {
  it("holds the model on a given-back GPU (429 'paused', not announced, its memory freed) while the other serves", async () => {
    const r = rig({ entries: { a: { endpoint: ENGINE, gpus: [0] }, b: { endpoint: OTHER, gpus: [1] } } });
    r.holds.setKnown([0, 1]);
    expect(r.holds.isHeld('a')).toBe(false);
    const state = r.holds.giveBack(0, true);
    expect(state).toEqual([expect.objectContaining({ index: 0, serving: false, cause: 'given_back' }), { index: 1, serving: true }]);
    expect(r.givenBack()).toEqual([0]);
    expect(r.holds.hold('a')).toEqual({ gpu: 0, cause: 'given_back', placement: 'owner' });
    expect(r.holds.isHeld('b')).toBe(false);
    expect(await outcome(r.scheduler, 'a')).toBe('429 paused');
    expect(await outcome(r.scheduler, 'b')).toBe('admitted');
    expect(r.heldEngines.at(-1)).toEqual(['a']);
    expect(r.unloaded).toEqual([['a']]);

    r.holds.giveBack(0, false);
    expect(r.holds.isHeld('a')).toBe(false);
    expect(await outcome(r.scheduler, 'a')).toBe('admitted');
    expect(r.heldEngines.at(-1)).toEqual([]);
  });

  it('refuses the requests already queued for a model when its GPU is given back', async () => {
    const r = rig({ entries: { a: { endpoint: ENGINE, gpus: [0] } }, models: [{ id: 'a', url: ENGINE }] });
    r.scheduler.setModel('a', [{ url: ENGINE, health: 'healthy', maxConcurrent: 1 }]);
    r.holds.setKnown([0, 1]);
    const running = await r.scheduler.admit('a', { requestId: 'run', source: 'local' });
    const queued = outcome(r.scheduler, 'a');
    r.holds.giveBack(0, true);
    expect(await queued).toBe('429 paused');
    running.release();
  });

  it('a model whose GPU nobody knows is held with any paused GPU, and says so', () => {
    const r = rig();
    r.holds.setKnown([0, 1]);
    r.holds.giveBack(1, true);
    expect(r.holds.placement('a', [ENGINE])).toEqual({ indexes: [0, 1], source: 'unknown' });
    expect(r.holds.hold('a')).toEqual({ gpu: 1, cause: 'given_back', placement: 'unknown' });
  });

  it('places a found engine where the driver says, and an engine it started by its --gpus', () => {
    const r = rig({ specs: [{ id: 'b', backend: 'llamacpp', gpus: '1' } as ServeSpec] });
    r.holds.setKnown([0, 1]);
    r.holds.learn(ENGINE, [0]);
    expect(r.holds.placement('a', [ENGINE])).toEqual({ indexes: [0], source: 'driver' });
    expect(r.holds.placement('b', [OTHER])).toEqual({ indexes: [1], source: 'managed' });
    r.holds.giveBack(1, true);
    expect(r.holds.isHeld('a')).toBe(false);
    expect(r.holds.hold('b')).toEqual({ gpu: 1, cause: 'given_back', placement: 'managed' });
    // The driver stops knowing (the engine moved, or nvidia-smi cannot say): unknown again, so held.
    r.holds.learn(ENGINE, undefined);
    expect(r.holds.hold('a')).toMatchObject({ gpu: 1, placement: 'unknown' });
  });

  it('refuses a choice where there is none: one GPU, or no such GPU', () => {
    const r = rig();
    r.holds.setKnown([0]);
    expect(() => r.holds.giveBack(0, true)).toThrow(GpuChoiceError);
    try {
      r.holds.giveBack(0, true);
    } catch (e) {
      expect((e as GpuChoiceError).code).toBe('single_gpu');
    }
    r.holds.setKnown([0, 1]);
    try {
      r.holds.giveBack(5, true);
      expect.unreachable('GPU 5 does not exist');
    } catch (e) {
      expect((e as GpuChoiceError).code).toBe('gpu_unknown');
    }
    expect(r.holds.state().every((s) => s.serving)).toBe(true);
  });

  it("keeps the owner's choice across a restart: the GPUs given back are applied when detection finds them", () => {
    const r = rig({ entries: { a: { endpoint: ENGINE, gpus: [0] } } });
    r.holds.setKnown([0, 1]);
    r.holds.giveBack(0, true);
    const again = rig({ entries: { a: { endpoint: ENGINE, gpus: [0] } } });
    // What the settings file holds, read by the next agent.
    const saved = r.givenBack();
    const next = new GpuHolds({
      registry: { all: () => [{ id: 'a', endpoints: [{ url: ENGINE }] }] as never },
      scheduler: again.scheduler,
      managed: { specs: () => [], setHeld: async () => undefined },
      entries: () => ({ a: { endpoint: ENGINE, gpus: [0] } }),
      givenBack: () => saved,
      saveGivenBack: () => undefined,
      freeMemory: false,
      unloadOllama: async () => undefined,
      announce: () => undefined,
      changed: () => undefined,
      log: { info: () => undefined } as never,
    });
    expect(next.isHeld('a')).toBe(false);
    next.setKnown([0, 1]);
    expect(next.hold('a')).toEqual({ gpu: 0, cause: 'given_back', placement: 'owner' });
  });
});

describe('managedGpus', () => {
  it('reads --gpus as the engine sees them', () => {
    expect(managedGpus(undefined, [0, 1])).toEqual([0, 1]);
    expect(managedGpus('all', [0, 1])).toEqual([0, 1]);
    expect(managedGpus('none', [0, 1])).toEqual([]);
    expect(managedGpus('device=1', [0, 1])).toEqual([1]);
    expect(managedGpus('0,1', [0, 1])).toEqual([0, 1]);
  });
});

describe('GpuGuard per GPU', () => {
  const sample = (temps: number[]): GpuSample => ({
    ts: 0,
    available: true,
    devices: temps.map((t, index) => ({
      index,
      utilization: 0.1,
      vramUsedMb: 1,
      vramTotalMb: 2,
      temperatureC: t,
      powerW: null,
      powerLimitW: null,
      fanPercent: null,
    })),
    cpuPercent: null,
    ramUsedMb: null,
    ramTotalMb: null,
  });

  it('a hot GPU 1 throttles the rig, then pauses GPU 1 only; cool, both are lifted; each decision names GPU 1', () => {
    const sampler = new EventEmitter();
    const pauses = new GpuPauses();
    pauses.setKnown([0, 1]);
    const throttles: number[] = [];
    const rigHot: Array<string | undefined> = [];
    const recorded: RailDecision[] = [];
    const guard = new GpuGuard({
      sampler,
      scheduler: { setThrottle: (x) => throttles.push(x) },
      pause: { setHot: (r) => rigHot.push(r) },
      gpus: pauses,
      limits: () => ({ temperatureC: 85 }),
      log: { info: () => undefined, warn: () => undefined } as never,
      record: (r) => recorded.push(r),
    });
    guard.start();
    for (let i = 0; i < 2; i++) sampler.emit('sample', sample([60, 90]));
    expect(throttles.at(-1)).toBe(0.5);
    expect(pauses.pausedGpus()).toEqual([]);
    sampler.emit('sample', sample([60, 95]));
    expect(pauses.pausedGpus()).toEqual([1]);
    expect(pauses.state()[1]).toMatchObject({ cause: 'gpu_hot', reason: expect.stringContaining('GPU 1 at 95 °C') });
    for (let i = 0; i < 3; i++) sampler.emit('sample', sample([60, 70]));
    expect(pauses.pausedGpus()).toEqual([]);
    expect(throttles.at(-1)).toBe(1);
    expect(rigHot).toEqual([]);
    // The rig's throttle span: one row when GPU 1 got hot, one when it cooled (its pause is GpuPauses' own row).
    expect(recorded.map((r) => `${r.gpu}:${r.code}`)).toEqual(['1:gpu_hot_throttle', '1:gpu_cool_resume']);
    guard.stop();
  });

  it('keeps the throttle span open while any GPU is hot: GPU 0 cooling does not end it while GPU 1 is over', () => {
    const sampler = new EventEmitter();
    const pauses = new GpuPauses();
    pauses.setKnown([0, 1]);
    const recorded: RailDecision[] = [];
    const guard = new GpuGuard({
      sampler,
      scheduler: { setThrottle: () => undefined },
      pause: { setHot: () => undefined },
      gpus: pauses,
      limits: () => ({ temperatureC: 85 }),
      log: { info: () => undefined, warn: () => undefined } as never,
      record: (r) => recorded.push(r),
    });
    guard.start();
    for (let i = 0; i < 2; i++) sampler.emit('sample', sample([90, 60]));
    for (let i = 0; i < 2; i++) sampler.emit('sample', sample([90, 90]));
    for (let i = 0; i < 3; i++) sampler.emit('sample', sample([70, 90]));
    expect(recorded.map((r) => r.code)).toEqual(['gpu_hot_throttle']);
    for (let i = 0; i < 3; i++) sampler.emit('sample', sample([70, 70]));
    expect(recorded.map((r) => r.code)).toEqual(['gpu_hot_throttle', 'gpu_cool_resume']);
    guard.stop();
  });
});
