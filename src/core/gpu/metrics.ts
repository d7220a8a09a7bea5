// The heartbeat's GPU `metrics` in the Go provider's keys and units (collectMetrics in
// internal/computing/inference_client.go, gpu_metrics_collector.go): utilisation and memory use in
// percent 0..100 averaged over the GPUs, per GPU `gpu_N_*` in %, MiB, °C and W, and 0 for the two
// averages when there is no GPU (or no live sample). The console keeps its own units (GpuSample).
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

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

export function heartbeatMetrics(sample: GpuSample | null, opts: HeartbeatMetricsOptions = {}): Record<string, number> {
  const out: Record<string, number> = { gpu_utilization: 0, memory_utilization: 0 };
  if (!sample) return out;
  const now = opts.now ?? Date.now();
  if (now - sample.ts > (opts.maxAgeMs ?? 10_000) || !sample.available) return out;

  const utils: number[] = [];
  const memPcts: number[] = [];
  for (const d of sample.devices) {
    const p = `gpu_${d.index}_`;
    if (d.utilization !== null) {
      const pct = round(d.utilization * 100, 2);
      utils.push(pct);
      out[`${p}utilization`] = pct;
    }
    if (d.vramUsedMb !== null) out[`${p}memory_used_mb`] = d.vramUsedMb;
    if (d.vramTotalMb !== null) out[`${p}memory_total_mb`] = d.vramTotalMb;
    if (d.vramUsedMb !== null && d.vramTotalMb) memPcts.push((d.vramUsedMb / d.vramTotalMb) * 100);
    if (d.temperatureC !== null) out[`${p}temperature_c`] = d.temperatureC;
    if (d.powerW !== null) out[`${p}power_draw_w`] = round(d.powerW, 2);
  }
  out.gpu_utilization = round(mean(utils), 2);
  out.memory_utilization = round(mean(memPcts), 2);
  return out;
}
