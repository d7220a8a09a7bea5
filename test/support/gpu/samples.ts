// Waiting on a sampler's 'sample' events, with a deadline (no sleeps).
import type { GpuSample } from '../../../src/shared/types';
import type { GpuSampler } from '../../../src/core/gpu/sampler';

/**
 * Resolves with every sample emitted from now until `done(collected)` returns true.
 * Rejects after `timeoutMs` with what was collected, so a failing test says what it saw.
 */
export function collectUntil(sampler: GpuSampler, done: (samples: GpuSample[]) => boolean, timeoutMs = 8000): Promise<GpuSample[]> {
  return new Promise((resolve, reject) => {
    const got: GpuSample[] = [];
    const onSample = (s: GpuSample) => {
      got.push(s);
      if (done(got)) {
        clearTimeout(timer);
        sampler.off('sample', onSample);
        resolve(got);
      }
    };
    const timer = setTimeout(() => {
      sampler.off('sample', onSample);
      reject(new Error(`timed out after ${timeoutMs} ms; samples: ${JSON.stringify(got.map(brief))}`));
    }, timeoutMs);
    sampler.on('sample', onSample);
  });
}

/** n samples that pass `pred`. */
export function waitFor(sampler: GpuSampler, n: number, pred: (s: GpuSample) => boolean = () => true, timeoutMs?: number): Promise<GpuSample[]> {
  return collectUntil(sampler, (all) => all.filter(pred).length >= n, timeoutMs).then((all) => all.filter(pred));
}

export function brief(s: GpuSample): unknown {
  return { available: s.available, reason: s.reason, devices: s.devices.map((d) => [d.index, d.utilization, d.vramUsedMb]) };
}

/** true while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
