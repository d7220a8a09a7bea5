// Live GPU and host series: one ring of 1 Hz points per GPU (60 minutes), never persisted.
import type { GpuSample } from '../../shared/types';
import { Ring } from '../../shared/ring';

export interface GpuPoint {
  ts: number;
  util: number | null; // percent 0..100
  vramUsedGb: number | null;
  vramTotalGb: number | null;
  tempC: number | null;
  powerW: number | null;
}

export interface HostPoint {
  ts: number;
  cpu: number | null; // percent
  ramUsedGb: number | null;
  ramTotalGb: number | null;
}

export const SERIES_MINUTES = 60;
export const SERIES_CAPACITY = SERIES_MINUTES * 60;

const gb = (mb: number | null) => (mb === null ? null : mb / 1024);

export class LiveSeries {
  private readonly gpus = new Map<number, Ring<GpuPoint>>();
  readonly host = new Ring<HostPoint>(SERIES_CAPACITY);
  private lastTs = -Infinity;

  constructor(private readonly capacity = SERIES_CAPACITY) {}

  /** Records one sample; older or repeated timestamps are ignored (history and live may overlap). */
  record(sample: GpuSample): boolean {
    if (!(sample.ts > this.lastTs)) return false;
    this.lastTs = sample.ts;
    this.host.push({ ts: sample.ts, cpu: sample.cpuPercent, ramUsedGb: gb(sample.ramUsedMb), ramTotalGb: gb(sample.ramTotalMb) });
    if (!sample.available) return true;
    for (const d of sample.devices) {
      let ring = this.gpus.get(d.index);
      if (!ring) {
        ring = new Ring<GpuPoint>(this.capacity);
        this.gpus.set(d.index, ring);
      }
      ring.push({
        ts: sample.ts,
        util: d.utilization === null ? null : Math.round(d.utilization * 1000) / 10,
        vramUsedGb: gb(d.vramUsedMb),
        vramTotalGb: gb(d.vramTotalMb),
        tempC: d.temperatureC,
        powerW: d.powerW,
      });
    }
    return true;
  }

  gpuIndexes(): number[] {
    return [...this.gpus.keys()].sort((a, b) => a - b);
  }

  /** Points of one GPU in the last `minutes` before `now`. */
  gpuWindow(index: number, minutes: number, now: number): GpuPoint[] {
    const since = now - minutes * 60_000;
    return this.gpus.get(index)?.tailWhile((p) => p.ts >= since) ?? [];
  }

  hostWindow(minutes: number, now: number): HostPoint[] {
    const since = now - minutes * 60_000;
    return this.host.tailWhile((p) => p.ts >= since);
  }

  clear(): void {
    this.gpus.clear();
    this.host.clear();
    this.lastTs = -Infinity;
  }
}

/**
 * Reduces a series to at most `max` points for drawing: each bucket becomes the mean of its numeric
 * fields (nulls skipped), stamped with the bucket's last timestamp. Short series pass through.
 */
export function downsample<P extends { ts: number }>(points: P[], max: number): P[] {
  if (points.length <= max) return points;
  const size = Math.ceil(points.length / max);
  const out: P[] = [];
  for (let i = 0; i < points.length; i += size) {
    const bucket = points.slice(i, i + size);
    const lastPoint = bucket[bucket.length - 1]!;
    const merged: Record<string, number | null> = { ts: lastPoint.ts };
    for (const key of Object.keys(lastPoint)) {
      if (key === 'ts') continue;
      let sum = 0;
      let n = 0;
      for (const p of bucket) {
        const v = (p as unknown as Record<string, number | null>)[key];
        if (typeof v === 'number') {
          sum += v;
          n++;
        }
      }
      merged[key] = n === 0 ? null : sum / n;
    }
    out.push(merged as unknown as P);
  }
  return out;
}
