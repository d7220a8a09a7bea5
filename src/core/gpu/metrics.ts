// The heartbeat's `metrics` map from the latest sample. Seed 000: gpu_utilization is a 0..1
// fraction and vram_used_gb a number; per-GPU gpu_N_* keys follow the Go provider's habit.
// A value that is not live is left out, never sent stale.
import type { GpuSample } from '../../shared/types';

export interface HeartbeatMetricsOptions {
  /** Clock for the staleness check (tests). */
  now?: number;
  /** A sample older than this is not live (default 10 s: the sampler stopped or stalled). */
  maxAgeMs?: number;
}

const round = (x: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

export function heartbeatMetrics(sample: GpuSample | null, opts: HeartbeatMetricsOptions = {}): Record<string, number> {
  const out: Record<string, number> = {};
  if (!sample) return out;
  const now = opts.now ?? Date.now();
  if (now - sample.ts > (opts.maxAgeMs ?? 10_000)) return out;

  if (sample.cpuPercent !== null) out.cpu_utilization = round(sample.cpuPercent / 100, 4);
  if (sample.ramUsedMb !== null) out.ram_used_gb = round(sample.ramUsedMb / 1024, 2);
  if (!sample.available) return out;

  const utils = sample.devices.flatMap((d) => (d.utilization === null ? [] : [d.utilization]));
  if (utils.length) out.gpu_utilization = round(utils.reduce((a, b) => a + b, 0) / utils.length, 4);
  const used = sample.devices.flatMap((d) => (d.vramUsedMb === null ? [] : [d.vramUsedMb]));
  if (used.length) out.vram_used_gb = round(used.reduce((a, b) => a + b, 0) / 1024, 2);
  const totals = sample.devices.flatMap((d) => (d.vramTotalMb === null ? [] : [d.vramTotalMb]));
  if (totals.length === used.length && totals.length) {
    const total = totals.reduce((a, b) => a + b, 0);
    if (total > 0) out.memory_utilization = round(used.reduce((a, b) => a + b, 0) / total, 4);
  }

  for (const d of sample.devices) {
    const p = `gpu_${d.index}_`;
    if (d.utilization !== null) out[`${p}utilization`] = round(d.utilization, 4);
    if (d.vramUsedMb !== null) out[`${p}vram_used_gb`] = round(d.vramUsedMb / 1024, 2);
    if (d.temperatureC !== null) out[`${p}temperature`] = d.temperatureC;
    if (d.powerW !== null) out[`${p}power_w`] = round(d.powerW, 1);
  }
  return out;
}
