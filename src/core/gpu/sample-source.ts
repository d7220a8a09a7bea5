// The contract between the sampler and whatever reads GPU metrics (a streaming nvidia-smi, or a
// tool spawned per sample). Sources report frames and outages; the sampler turns both into samples.
import type { GpuDeviceSample } from '../../shared/types';

export interface SourceEvents {
  /** One reading of every GPU the tool reported. */
  frame(devices: GpuDeviceSample[]): void;
  /** The tool is missing, failed, died or hung; metrics are unavailable until the next frame. */
  down(reason: string): void;
}

export interface SampleSource {
  /** 'nvidia-smi -lms', 'nvidia-smi (spawn per sample)', 'amd-smi', 'rocm-smi' */
  readonly name: string;
  start(): void;
  /** Called once per interval by the sampler: hang checks, polls, restarts. */
  tick(now: number): void;
  /** Stops timers and children; resolves when every child has exited. */
  stop(): Promise<void>;
}

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 30_000 };

/** 1 s, 2 s, 4 s … capped: the delay before attempt number `attempt` (1-based). */
export function backoffDelay(b: Backoff, attempt: number): number {
  return Math.min(b.maxMs, b.initialMs * 2 ** Math.max(0, attempt - 1));
}
