// CPU cost of GPU sampling: one nvidia-smi spawned per sample vs ONE long-running `nvidia-smi -lms`.
// Both run against the fake nvidia-smi (a bash script replaying a real two-GPU capture) at a short
// interval, so many samples fit in a few seconds. CPU is counted for this process AND the tool:
//   spawn mode:        this process + reaped children (/proc/self/stat cutime+cstime)
//   long-running mode: this process + the live child (/proc/<pid>/stat utime+stime+cutime+cstime)
// Linux only (/proc). Run: npx tsx bench/gpu-sampler.ts
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GpuSampler, type SamplerMode } from '../src/core/gpu/sampler';
import type { GpuSample } from '../src/shared/types';
import { fixture, makeFakeBin, writeFakeNvidiaSmi, type FakeBin } from '../test/support/gpu/fake-tools';

export interface GpuSamplerBench {
  spawnPerSampleCpuMsPerSample: number;
  longRunningCpuMsPerSample: number;
  /** spawn / long-running */
  ratio: number;
  /** Long-running cost at 1 sample per second, in % of one core. */
  longRunningCorePercentAt1Hz: number;
}

export interface BenchOptions {
  /** Per mode (default 8 s, so ~16 s in all). */
  durationMs?: number;
  intervalMs?: number;
}

/** USER_HZ: the unit of /proc/<pid>/stat times; 100 on every mainstream Linux. */
const TICK_MS = 10;

function statTicks(pid: number | 'self'): { self: number; children: number } {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ", field 3 (state) is f[0]; utime, stime, cutime, cstime are fields 14-17.
  const n = (i: number): number => Number(f[i - 3]);
  return { self: n(14) + n(15), children: n(16) + n(17) };
}

function ownCpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** The live (non-zombie) direct child of this process running a tool from `binDir`. */
function toolChild(binDir: string): number | null {
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z' && Number(ppid) === process.pid && fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(binDir)) return Number(e);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

interface ModeCost {
  cpuMs: number;
  ownMs: number;
  toolMs: number;
  samples: number;
}

async function runMode(bin: FakeBin, mode: SamplerMode, durationMs: number, intervalMs: number): Promise<ModeCost> {
  const sampler = new GpuSampler({ intervalMs, mode, env: bin.env() });
  let samples = 0;
  let firstAt = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  sampler.on('sample', (s: GpuSample) => {
    if (!s.available) return;
    if (!firstAt) firstAt = Date.now();
    samples += 1;
    if (Date.now() - firstAt >= durationMs) done();
  });
  const own0 = process.cpuUsage();
  const kids0 = statTicks('self').children;
  sampler.start();
  await finished;
  const ownMs = ownCpuMs(own0); // before the /proc scan below, which is the bench's cost, not the sampler's
  let childMs = 0;
  if (mode === 'long-running') {
    const pid = toolChild(bin.dir);
    if (pid === null) throw new Error('the long-running nvidia-smi is not running');
    const t = statTicks(pid);
    childMs = (t.self + t.children) * TICK_MS;
  }
  await sampler.stop();
  if (mode === 'spawn') childMs = (statTicks('self').children - kids0) * TICK_MS;
  return { cpuMs: ownMs + childMs, ownMs, toolMs: childMs, samples };
}

/** CPU of this process doing nothing but waking up every interval: the floor under any sampler. */
async function idleCpuMsPerTick(intervalMs: number, ticks: number): Promise<number> {
  const own0 = process.cpuUsage();
  await new Promise<void>((resolve) => {
    let n = 0;
    const t = setInterval(() => {
      if (++n >= ticks) {
        clearInterval(t);
        resolve();
      }
    }, intervalMs);
  });
  return ownCpuMs(own0) / ticks;
}

/** Filled by benchGpuSampler for the printed report. */
export const lastBenchDetail: { spawn?: ModeCost; longRunning?: ModeCost; idleMsPerTick?: number } = {};

export async function benchGpuSampler(opts: BenchOptions = {}): Promise<GpuSamplerBench> {
  if (process.platform !== 'linux') throw new Error('benchGpuSampler reads /proc: Linux only');
  const durationMs = opts.durationMs ?? 8000;
  const intervalMs = opts.intervalMs ?? 100;
  const bin = makeFakeBin();
  try {
    writeFakeNvidiaSmi(bin, fixture('nvidia/two-gpu'));
    await runMode(bin, 'long-running', 300, intervalMs); // warm-up: module loading, JIT
    const spawn = await runMode(bin, 'spawn', durationMs, intervalMs);
    const long = await runMode(bin, 'long-running', durationMs, intervalMs);
    lastBenchDetail.spawn = spawn;
    lastBenchDetail.longRunning = long;
    lastBenchDetail.idleMsPerTick = await idleCpuMsPerTick(intervalMs, 20);
    const spawnPer = spawn.cpuMs / Math.max(1, spawn.samples);
    const longPer = long.cpuMs / Math.max(1, long.samples);
    return {
      spawnPerSampleCpuMsPerSample: round(spawnPer),
      longRunningCpuMsPerSample: round(longPer),
      ratio: round(spawnPer / Math.max(longPer, 0.001)),
      longRunningCorePercentAt1Hz: round(longPer / 10), // ms of CPU per 1000 ms, in %
    };
  } finally {
    bin.cleanup();
  }
}

const round = (x: number): number => Math.round(x * 1000) / 1000;

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
  const r = await benchGpuSampler();
  const d = lastBenchDetail;
  const split = (c?: ModeCost) => (c ? `(${c.samples} samples; this process ${c.ownMs.toFixed(0)} ms + tool ${c.toolMs.toFixed(0)} ms)` : '');
  console.log('GPU sampler CPU cost (fake nvidia-smi replaying a two-GPU capture, 100 ms interval, ~8 s per mode)');
  console.log(`  spawn per sample    : ${r.spawnPerSampleCpuMsPerSample.toFixed(3)} ms CPU per sample ${split(d.spawn)}`);
  console.log(`  long-running -lms   : ${r.longRunningCpuMsPerSample.toFixed(3)} ms CPU per sample ${split(d.longRunning)}`);
  console.log(`  ratio               : ${r.ratio.toFixed(1)}x`);
  console.log(`  long-running at 1 Hz: ${r.longRunningCorePercentAt1Hz.toFixed(3)} % of one core`);
  console.log(
    `  (floor: this process waking up once per interval and doing nothing costs ${(d.idleMsPerTick ?? 0).toFixed(3)} ms per wake-up here; included above, not subtracted)`,
  );
  console.log(
    'Note: the fake nvidia-smi is a bash script, so in spawn mode the cost is dominated by starting a process (fork/exec of bash).\n' +
      'A real nvidia-smi also initialises NVML on every start (tens of ms on a real driver), so the real ratio is larger still.',
  );
  console.log(JSON.stringify(r));
}
