// GpuSampler against fake tools replaying real captures: the sampled series, outages reported as
// "metrics unavailable", restart after the tool dies or hangs, and CPU/RAM on a GPU-less host.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GpuSampler, type GpuSamplerOptions } from '../../../src/core/gpu/sampler';
import { heartbeatMetrics } from '../../../src/core/gpu/metrics';
import { Ring } from '../../../src/shared/ring';
import type { GpuDeviceSample, GpuSample } from '../../../src/shared/types';
import { fixture, makeFakeBin, writeFakeAmdSmi, writeFakeNvidiaSmi, writeFakeRocmSmi, type FakeBin } from '../../support/gpu/fake-tools';
import { alive, collectUntil, waitFor } from '../../support/gpu/samples';

const bins: FakeBin[] = [];
const samplers: GpuSampler[] = [];
afterEach(async () => {
  await Promise.all(samplers.splice(0).map((s) => s.stop()));
  while (bins.length) bins.pop()?.cleanup();
});

function setup(fixtureDir: string | null, extraEnv: Record<string, string> = {}, opts: GpuSamplerOptions = {}) {
  const bin = makeFakeBin();
  bins.push(bin);
  if (fixtureDir) writeFakeNvidiaSmi(bin, fixture(fixtureDir));
  const sampler = new GpuSampler({
    intervalMs: 100,
    env: bin.env({ FAKE_SMI_STATE: path.join(bin.dir, 'runs'), ...extraEnv }),
    backoff: { initialMs: 100, maxMs: 400 },
    ...opts,
  });
  samplers.push(sampler);
  return { bin, sampler };
}

const dev = (index: number, u: number | null, used: number, total: number, t: number, p: number, lim: number | null, fan: number | null): GpuDeviceSample => ({
  index,
  utilization: u,
  vramUsedMb: used,
  vramTotalMb: total,
  temperatureC: t,
  powerW: p,
  powerLimitW: lim,
  fanPercent: fan,
});

/** Live (not zombie) children of this test process running the fake tools in `binDir`. */
function fakeChildren(binDir: string): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || Number(ppid) !== process.pid) continue;
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(binDir)) out.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe('NVIDIA, one long-running nvidia-smi -lms', () => {
  it('two-GPU box: frames stream in as samples with the captured values, in order', async () => {
    const { sampler } = setup('nvidia/two-gpu');
    sampler.start();
    expect(sampler.sourceName).toBe('nvidia-smi -lms');
    const got = await waitFor(sampler, 4, (s) => s.available);
    const idle = [dev(0, 0, 596, 16376, 43, 26.2, 320, 0), dev(1, 0, 214, 8192, 40, 39.32, 250, 38)];
    const load = [dev(0, 0.07, 1474, 16376, 46, 84.24, 320, 0), dev(1, 0.08, 819, 8192, 45, 111.5, 250, 38)];
    expect(got.map((s) => s.devices)).toEqual([idle, load, idle, load]);
    for (const s of got) {
      expect(s.ramTotalMb).toBeGreaterThan(0);
      expect(s.ramUsedMb).toBeGreaterThan(0);
    }
    expect(sampler.latest()).toEqual(got[3]);
    // ONE child for the whole series, not one per sample.
    expect(fakeChildren(bins[0]?.dir ?? '')).toHaveLength(1);
  });

  it('H100 with MIG: utilization [N/A] stays null (not 0), other values are live', async () => {
    const { sampler } = setup('nvidia/h100-mig');
    sampler.start();
    const got = await waitFor(sampler, 2, (s) => s.available);
    expect(got.map((s) => s.devices)).toEqual([[dev(0, null, 59, 81559, 42, 71.15, 700, null)], [dev(0, null, 11125, 81559, 53, 433.78, 700, null)]]);
    const m = heartbeatMetrics(got[1] ?? null);
    // No GPU reports utilisation: the average is 0 (as Go's), the per-GPU key is left out rather than a made-up 0.
    expect(m.gpu_utilization).toBe(0);
    expect(m.gpu_0_utilization).toBeUndefined();
    expect(m).toMatchObject({
      memory_utilization: 13.64,
      gpu_0_memory_used_mb: 11125,
      gpu_0_memory_total_mb: 81559,
      gpu_0_temperature_c: 53,
      gpu_0_power_draw_w: 433.78,
    });
  });

  it('RTX 3080: the captured reading, repeated every interval', async () => {
    const { sampler } = setup('nvidia/rtx3080');
    sampler.start();
    const got = await waitFor(sampler, 3, (s) => s.available);
    for (const s of got) expect(s.devices).toEqual([dev(0, 0, 4805, 10240, 43, 75, 380, 0)]);
    // In the order read. Their spacing is the tool's (-lms) and the machine's: on a busy machine two lines can be
    // read 15 ms apart, so it is not asserted here.
    const gaps = got.slice(1).map((s, i) => s.ts - (got[i]?.ts ?? 0));
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(0);
  });

  it('the tool dies mid-run: "metrics unavailable" samples with the reason, then a restart and live values again', async () => {
    const { sampler } = setup('nvidia/two-gpu', { FAKE_SMI_MODE: 'die-first', FAKE_SMI_FRAMES: '2' });
    sampler.start();
    const seq = await collectUntil(sampler, (all) => {
      const firstDown = all.findIndex((s) => !s.available);
      return firstDown >= 0 && all.slice(firstDown).filter((s) => s.available).length >= 2;
    });
    const firstDown = seq.findIndex((s) => !s.available);
    expect(seq.slice(0, firstDown).every((s) => s.available)).toBe(true);
    expect(firstDown).toBe(2); // the two frames printed before it died
    const down = seq.filter((s) => !s.available);
    for (const s of down) {
      expect(s.reason).toBe('nvidia-smi exited with code 15: Unable to determine the device handle for GPU0000:01:00.0: Unknown Error; restarting it.');
      // Never a frozen value passed off as live: every GPU reading is null while down.
      expect(s.devices.map((d) => d.index)).toEqual([0, 1]);
      expect(s.devices.every((d) => Object.entries(d).every(([k, v]) => k === 'index' || v === null))).toBe(true);
      expect(heartbeatMetrics(s)).toEqual({ gpu_utilization: 0, memory_utilization: 0 });
    }
    const back = seq.slice(firstDown).filter((s) => s.available);
    expect(back[0]?.devices[0]?.vramUsedMb).toBe(596); // the restarted tool starts at frame 1 again
    expect(fs.readFileSync(path.join(bins[0]?.dir ?? '', 'runs'), 'utf8')).toBe('xx'); // started twice
  });

  it('the tool hangs (silent for > 3 intervals): it is killed, samples say so, and it is restarted', async () => {
    const { bin, sampler } = setup('nvidia/rtx3080', { FAKE_SMI_MODE: 'hang-first', FAKE_SMI_FRAMES: '2' });
    sampler.start();
    const seq = await collectUntil(sampler, (all) => {
      const firstDown = all.findIndex((s) => !s.available);
      return firstDown >= 0 && all.slice(firstDown).some((s) => s.available);
    });
    const firstDown = seq.findIndex((s) => !s.available);
    expect(seq[firstDown]?.reason).toMatch(/^nvidia-smi stopped answering \(no output for 0\.[3-9] s\); restarting it\.$/);
    expect(seq.slice(firstDown).find((s) => s.available)?.devices).toEqual([dev(0, 0, 4805, 10240, 43, 75, 380, 0)]);
    expect(fakeChildren(bin.dir)).toHaveLength(1); // the hung one is gone, only the restarted one runs
  });

  it('driver/library mismatch: every sample is unavailable with the tool message, retried with backoff', async () => {
    const { bin, sampler } = setup('nvidia/rtx3080', { FAKE_SMI_MODE: 'mismatch' });
    sampler.start();
    const t0 = Date.now();
    const got = await waitFor(sampler, 10, () => true);
    const elapsed = Date.now() - t0;
    // Restarts back off (100, 200, 400, 400 … ms) instead of one per interval.
    const runs = fs.readFileSync(path.join(bin.dir, 'runs'), 'utf8').length;
    expect(runs).toBeGreaterThanOrEqual(2);
    expect(runs).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 400));
    expect(runs).toBeLessThan(got.length);
    for (const s of got) {
      expect(s.available).toBe(false);
      expect(s.reason).toBe(
        'nvidia-smi exited with code 18: Failed to initialize NVML: Driver/library version mismatch NVML library version: 570.124; restarting it.',
      );
      expect(s.devices).toEqual([]);
      expect(s.ramUsedMb).toBeGreaterThan(0); // host metrics stay live
    }
  });

  it('stop() ends the child and no more samples follow', async () => {
    const { bin, sampler } = setup('nvidia/two-gpu');
    sampler.start();
    await waitFor(sampler, 1, (s) => s.available);
    const pids = fakeChildren(bin.dir);
    expect(pids).toHaveLength(1);
    await sampler.stop();
    expect(pids.filter(alive)).toEqual([]);
    const before = sampler.history(60).length;
    let after = 0;
    sampler.on('sample', () => (after += 1));
    // Two intervals pass on a deadline helper: nothing may arrive.
    await new Promise((r) => setTimeout(r, 250));
    expect(after).toBe(0);
    expect(sampler.history(60).length).toBe(before);
  });
});

describe('NVIDIA, spawn mode (one nvidia-smi per sample)', () => {
  it('gives the same series, one short-lived process per sample', async () => {
    const { sampler } = setup('nvidia/two-gpu', {}, { mode: 'spawn' });
    sampler.start();
    expect(sampler.sourceName).toBe('nvidia-smi (spawn per sample)');
    const got = await waitFor(sampler, 3, (s) => s.available);
    expect(got.map((s) => s.devices.map((d) => d.vramUsedMb))).toEqual([
      [596, 214],
      [1474, 819],
      [596, 214],
    ]);
  });
});

describe('AMD (amd-smi / rocm-smi spawned per sample)', () => {
  it('RX 7900 XTX via amd-smi metric --json', async () => {
    const bin = makeFakeBin();
    bins.push(bin);
    writeFakeAmdSmi(bin, fixture('amd/rx7900xtx'));
    const sampler = new GpuSampler({ intervalMs: 100, env: bin.env() });
    samplers.push(sampler);
    sampler.start();
    expect(sampler.sourceName).toBe('amd-smi');
    const [s] = await waitFor(sampler, 1, (x) => x.available);
    expect(s?.devices).toEqual([dev(0, 0.01, 27, 24560, 29, 47, null, null)]);
    expect(heartbeatMetrics(s ?? null)).toMatchObject({
      gpu_utilization: 1,
      memory_utilization: 0.11,
      gpu_0_memory_used_mb: 27,
      gpu_0_temperature_c: 29,
      gpu_0_power_draw_w: 47,
    });
  });

  it('amd-smi failing hands over to rocm-smi; missing readings stay null', async () => {
    const bin = makeFakeBin();
    bins.push(bin);
    writeFakeAmdSmi(bin, fixture('amd/rx7900xtx'));
    writeFakeRocmSmi(bin, fixture('amd/rx7900xt-rocm/rocm-smi.json'));
    const sampler = new GpuSampler({ intervalMs: 100, env: bin.env({ FAKE_AMDSMI_FAIL: '1' }) });
    samplers.push(sampler);
    sampler.start();
    const seq = await collectUntil(sampler, (all) => all.some((s) => s.available));
    expect(seq[0]?.available).toBe(false);
    expect(seq[0]?.reason).toContain('amd-smi failed: ERROR:root:Unable to get devices, driver not initialized');
    expect(sampler.sourceName).toBe('rocm-smi');
    expect(seq.find((s) => s.available)?.devices).toEqual([
      { index: 0, utilization: 0, vramUsedMb: 27, vramTotalMb: 20464, temperatureC: null, powerW: null, powerLimitW: null, fanPercent: null },
    ]);
  });
});

describe('no GPU', () => {
  it('samples every interval with devices [] and live CPU/RAM', async () => {
    const bin = makeFakeBin();
    bins.push(bin);
    const sampler = new GpuSampler({ intervalMs: 50, env: bin.env() });
    samplers.push(sampler);
    sampler.start();
    expect(sampler.sourceName).toBe('none');
    const got = await waitFor(sampler, 3);
    for (const s of got) {
      expect(s).toMatchObject({ available: true, devices: [] });
      expect(s.cpuPercent).not.toBeNull();
      expect(s.cpuPercent as number).toBeGreaterThanOrEqual(0);
      expect(s.cpuPercent as number).toBeLessThanOrEqual(100);
      expect(s.ramUsedMb as number).toBeLessThanOrEqual(s.ramTotalMb as number);
    }
    // No GPU: the two averages are 0, as the Go provider sends them, and nothing else.
    expect(heartbeatMetrics(got[2] ?? null)).toEqual({ gpu_utilization: 0, memory_utilization: 0 });
  });

  it('history is bounded and filtered by age', async () => {
    const bin = makeFakeBin();
    bins.push(bin);
    const sampler = new GpuSampler({ intervalMs: 10, env: bin.env() });
    samplers.push(sampler);
    sampler.start();
    await waitFor(sampler, 5);
    const h = sampler.history(60);
    expect(h.length).toBeGreaterThanOrEqual(5);
    expect(h.every((s, i) => i === 0 || s.ts >= (h[i - 1] as GpuSample).ts)).toBe(true);
    expect(sampler.history(0.0001).length).toBeLessThanOrEqual(1); // the last 6 ms
  });

  it('the ring keeps only the newest items', () => {
    const r = new Ring<number>(3);
    for (let i = 1; i <= 5; i++) r.push(i);
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.last()).toBe(5);
    expect(r.size).toBe(3);
    expect(() => new Ring(0)).toThrow(RangeError);
  });
});

describe('heartbeatMetrics', () => {
  const sample = (over: Partial<GpuSample> = {}): GpuSample => ({
    ts: 1_000_000,
    available: true,
    devices: [dev(0, 0.07, 1474, 16376, 46, 84.24, 320, 0), dev(1, 0.08, 819, 8192, 45, 111.5, 250, 38)],
    cpuPercent: 12.5,
    ramUsedMb: 8192,
    ramTotalMb: 32768,
    ...over,
  });

  it('Go keys and units: percent 0..100 averaged over GPUs, per-GPU MiB, °C and W (collectMetrics)', () => {
    expect(heartbeatMetrics(sample(), { now: 1_000_500 })).toEqual({
      gpu_utilization: 7.5,
      memory_utilization: 9.5, // mean of 1474/16376 and 819/8192, in percent
      gpu_0_utilization: 7,
      gpu_0_memory_used_mb: 1474,
      gpu_0_memory_total_mb: 16376,
      gpu_0_temperature_c: 46,
      gpu_0_power_draw_w: 84.24,
      gpu_1_utilization: 8,
      gpu_1_memory_used_mb: 819,
      gpu_1_memory_total_mb: 8192,
      gpu_1_temperature_c: 45,
      gpu_1_power_draw_w: 111.5,
    });
  });

  it('nothing live (unavailable, stale, no sample): the averages are 0 and no per-GPU value is made up', () => {
    expect(heartbeatMetrics(sample({ available: false, reason: 'x' }), { now: 1_000_500 })).toEqual({ gpu_utilization: 0, memory_utilization: 0 });
    expect(heartbeatMetrics(sample(), { now: 1_000_000 + 60_000 })).toEqual({ gpu_utilization: 0, memory_utilization: 0 });
    expect(heartbeatMetrics(null)).toEqual({ gpu_utilization: 0, memory_utilization: 0 });
  });
});
