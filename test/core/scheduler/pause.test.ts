import { afterEach, describe, expect, it } from 'vitest';
import { PauseController } from '../../../src/core/scheduler/pause';
import { GpuPauses } from '../../../src/core/scheduler/gpu-pauses';
import { bindPause } from '../../../src/core/scheduler/pause-binding';
import { activeWindow } from '../../../src/core/scheduler/pause-schedule';
import { PAUSED_MESSAGE, Scheduler } from '../../../src/core/scheduler/scheduler';
import { SchedulerRejection } from '../../../src/core/scheduler/types';
import type { GpuProcess, GpuSample, PauseState } from '../../../src/shared/types';

let controllers: PauseController[] = [];
let schedulers: Scheduler[] = [];
afterEach(() => {
  for (const c of controllers) c.close();
  for (const s of schedulers) s.close();
  controllers = [];
  schedulers = [];
});

function controller(opts: ConstructorParameters<typeof PauseController>[0] = {}) {
  const c = new PauseController(opts);
  controllers.push(c);
  const changes: PauseState[] = [];
  c.on('change', (s: PauseState) => changes.push(s));
  return { c, changes };
}

const engine: GpuProcess = { pid: 10, name: 'python3', usedMemoryMb: 20_000, isEngine: true };
const xorg: GpuProcess = { pid: 11, name: '/usr/lib/xorg/Xorg', usedMemoryMb: 2_500, isEngine: false };
const game = (mb: number): GpuProcess => ({ pid: 42, name: 'Cyberpunk2077.exe', usedMemoryMb: mb, isEngine: false });

function sample(utilization: number | null): GpuSample {
  return {
    ts: 0,
    available: true,
    devices: [{ index: 0, utilization, vramUsedMb: null, vramTotalMb: null, temperatureC: null, powerW: null, powerLimitW: null, fanPercent: null }],
    cpuPercent: null,
    ramUsedMb: null,
    ramTotalMb: null,
  };
}

describe('PauseController: GPU busy', () => {
  it('pauses after consecutive heavy readings and resumes only after consecutive clear ones (hysteresis)', () => {
    const { c, changes } = controller({ gpu: { pauseAfterReadings: 2, resumeAfterReadings: 3, foreignVramMb: 2048, foreignVramClearMb: 1024 } });
    // Our engine's own VRAM and an ignored compositor never count.
    c.updateGpuProcesses([engine, xorg]);
    c.updateGpuProcesses([engine, xorg]);
    expect(c.state().paused).toBe(false);

    c.updateGpuProcesses([engine, game(4000)]);
    expect(c.state().paused).toBe(false); // one reading is not enough
    c.updateGpuProcesses([engine, game(4000)]);
    expect(c.state()).toMatchObject({ paused: true, cause: 'gpu_busy' });
    expect(c.state().reason).toContain('Cyberpunk2077.exe (pid 42) is using 4000 MB');
    expect(changes).toHaveLength(1);

    // Hovering between the two thresholds neither resumes nor counts towards resuming.
    for (let i = 0; i < 10; i++) c.updateGpuProcesses([engine, game(1500)]);
    expect(c.state().paused).toBe(true);
    // Two clear readings, then a relapse: the count restarts.
    c.updateGpuProcesses([engine]);
    c.updateGpuProcesses([engine]);
    c.updateGpuProcesses([engine, game(3000)]);
    c.updateGpuProcesses([engine]);
    c.updateGpuProcesses([engine]);
    expect(c.state().paused).toBe(true);
    c.updateGpuProcesses([engine]);
    expect(c.state()).toEqual({ paused: false });
    expect(changes.map((s) => s.paused)).toEqual([true, false]);
  });

  it('counts high utilisation as foreign only while none of our requests runs', () => {
    let ours = 1;
    const { c } = controller({ engineInFlight: () => ours, gpu: { pauseAfterReadings: 2, resumeAfterReadings: 2 } });
    c.updateGpuProcesses([engine], sample(0.95));
    c.updateGpuProcesses([engine], sample(0.95));
    expect(c.state().paused).toBe(false);

    ours = 0;
    c.updateGpuProcesses([engine], sample(0.9));
    c.updateGpuProcesses([engine], sample(0.9));
    expect(c.state()).toMatchObject({ paused: true, cause: 'gpu_busy', reason: 'The GPU is 90% busy with work that is not ours' });

    c.updateGpuProcesses([engine], sample(0.1));
    c.updateGpuProcesses([engine], sample(0.1));
    expect(c.state().paused).toBe(false);
  });

  it('never lifts a manual pause by itself; manual wins over the GPU cause', () => {
    const { c, changes } = controller({ gpu: { pauseAfterReadings: 1, resumeAfterReadings: 1 } });
    c.pauseManual('Gaming tonight');
    c.updateGpuProcesses([game(8000)]);
    expect(c.state()).toMatchObject({ paused: true, cause: 'manual', reason: 'Gaming tonight' });
    c.updateGpuProcesses([]);
    expect(c.state()).toMatchObject({ paused: true, cause: 'manual' });

    // Resuming by hand while the game still runs leaves the GPU cause in charge.
    c.updateGpuProcesses([game(8000)]);
    c.resumeManual();
    expect(c.state()).toMatchObject({ paused: true, cause: 'gpu_busy' });
    c.updateGpuProcesses([]);
    expect(c.state()).toEqual({ paused: false });
    expect(changes.map((s) => s.cause ?? 'none')).toEqual(['manual', 'gpu_busy', 'none']);
  });
});

describe('PauseController: schedule', () => {
  // Local-time dates: Monday 2025-01-06.
  const at = (day: number, hh: number, mm = 0) => new Date(2025, 0, 5 + day, hh, mm).getTime();

  it('pauses inside a window and resumes after it, on an injected clock', () => {
    let t = at(1, 17, 59); // Monday 17:59
    const { c, changes } = controller({ now: () => t });
    c.setSchedule([{ days: [1, 2, 3, 4, 5], from: '18:00', to: '23:00' }]);
    expect(c.state().paused).toBe(false);
    t = at(1, 18, 0);
    c.evaluateSchedule();
    expect(c.state()).toEqual({ paused: true, cause: 'schedule', reason: 'Paused by your schedule (18:00–23:00)', since: t });
    t = at(1, 22, 59);
    c.evaluateSchedule();
    expect(c.state().paused).toBe(true);
    t = at(1, 23, 0);
    c.evaluateSchedule();
    expect(c.state()).toEqual({ paused: false });
    t = at(6, 19, 0); // Saturday: not listed
    c.evaluateSchedule();
    expect(c.state().paused).toBe(false);
    expect(changes.map((s) => s.paused)).toEqual([true, false]);
  });

  it("a window naming a GPU pauses that GPU only on a rig with several; with one GPU it is the rig's", () => {
    let t = at(1, 19, 0); // Monday 19:00
    let perGpu = true;
    const pauses = new GpuPauses();
    pauses.setKnown([0, 1]);
    const c = new PauseController({ now: () => t, gpuSchedule: { perGpu: () => perGpu, apply: (m) => pauses.setScheduled(m) } });
    c.setSchedule([{ days: [1], from: '18:00', to: '23:00', gpus: [1] }]);
    expect(c.state()).toEqual({ paused: false });
    expect(pauses.state()[1]).toMatchObject({ serving: false, cause: 'schedule', reason: 'Paused by your schedule (18:00–23:00)' });
    expect(pauses.state()[0]).toEqual({ index: 0, serving: true });
    t = at(1, 23, 0);
    c.evaluateSchedule();
    expect(pauses.pausedGpus()).toEqual([]);
    perGpu = false;
    t = at(1, 19, 0);
    c.evaluateSchedule();
    expect(c.state()).toMatchObject({ paused: true, cause: 'schedule' });
    expect(pauses.pausedGpus()).toEqual([]);
    c.close();
  });

  it('handles windows past midnight and all-day windows', () => {
    const night = [{ days: [5], from: '22:00', to: '06:00' }]; // Friday night into Saturday
    expect(activeWindow(night, at(5, 21, 59))).toBeUndefined();
    expect(activeWindow(night, at(5, 23, 30))).toBeDefined();
    expect(activeWindow(night, at(6, 5, 59))).toBeDefined();
    expect(activeWindow(night, at(6, 6, 0))).toBeUndefined();
    expect(activeWindow(night, at(4, 2, 0))).toBeUndefined(); // Thursday morning: Wednesday not listed
    const sunday = [{ days: [0], from: '00:00', to: '00:00' }];
    expect(activeWindow(sunday, at(0, 12))).toBeDefined();
    expect(activeWindow(sunday, at(1, 12))).toBeUndefined();
  });

  it('evaluates on its timer and refuses a malformed schedule with a clear message', async () => {
    let t = at(2, 9, 59);
    const { c } = controller({ now: () => t, scheduleCheckMs: 5 });
    c.setSchedule([{ days: [2], from: '10:00', to: '11:00' }]);
    expect(c.state().paused).toBe(false);
    t = at(2, 10, 0);
    const paused = await new Promise<PauseState>((resolve) => c.once('change', resolve));
    expect(paused).toMatchObject({ paused: true, cause: 'schedule' });

    expect(() => c.setSchedule([{ days: [7], from: '25:00', to: '10:00' }])).toThrow(expect.objectContaining({ code: 'invalid_schedule', field: '0.days.0' }));
    expect(() => c.setSchedule('weekends')).toThrow(expect.objectContaining({ code: 'invalid_schedule' }));
    // The old schedule stays in force after a refused one.
    expect(c.schedule()).toEqual([{ days: [2], from: '10:00', to: '11:00' }]);
  });
});

describe('bindPause', () => {
  it('pauses the scheduler without dropping a running request, then resumes it', async () => {
    const { c } = controller();
    const s = new Scheduler({ maxConcurrentPerEndpoint: 2 });
    schedulers.push(s);
    s.setModel('m', [{ url: 'http://127.0.0.1:8000', health: 'healthy' }]);
    const unbind = bindPause(c, s);
    const running = await s.admit('m', { requestId: 'a', source: 'hub' });

    c.pauseManual();
    expect(s.isPaused()).toBe(true);
    await expect(s.admit('m', { requestId: 'b', source: 'hub' })).rejects.toMatchObject({ statusCode: 429, message: PAUSED_MESSAGE });
    expect(s.inFlight()).toBe(1);
    running.release();
    await s.drained();

    c.resumeManual();
    expect(s.isPaused()).toBe(false);
    const again = await s.admit('m', { requestId: 'c', source: 'local' });
    again.release();

    unbind();
    c.pauseManual();
    expect(s.isPaused()).toBe(false);
  });

  it('gives clients a generic message for a GPU pause (no process names)', async () => {
    const { c } = controller({ gpu: { pauseAfterReadings: 1 } });
    const s = new Scheduler();
    schedulers.push(s);
    s.setModel('m', [{ url: 'http://127.0.0.1:8000', health: 'healthy' }]);
    bindPause(c, s);
    c.updateGpuProcesses([game(9000)]);
    const err = await s.admit('m', { requestId: 'x', source: 'hub' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchedulerRejection);
    expect(err).toMatchObject({ reason: 'paused', statusCode: 429 });
    // The refusal says why in general terms and never names the owner's program.
    expect((err as SchedulerRejection).message).not.toContain('Cyberpunk');
    expect((err as SchedulerRejection).message).toMatch(/GPU is busy/);
  });
});
