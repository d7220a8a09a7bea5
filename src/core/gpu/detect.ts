// detectGpus: which GPUs this machine has, from the most exact source available.
//
// Which source wins, and why:
//  1. nvidia-smi, when it lists GPUs. It is NVIDIA's own reading of the driver: exact VRAM,
//     driver and CUDA versions, compute capability, MIG slices. A machine with a working NVIDIA
//     stack serves CUDA engines, so nothing else is added (an iGPU would only inflate gpu_count).
//  2. amd-smi, else rocm-smi. They read the amdgpu driver: exact VRAM, where Windows/WMI based
//     readings stop at 4 GB.
//  3. systeminformation, for everything else (Apple Silicon, Intel, cards without their vendor
//     tool). It is the only source on macOS; elsewhere its VRAM is best-effort.
// A vendor tool that fails (e.g. "Failed to initialize NVML: Driver/library version mismatch")
// becomes a note and we fall through to the next source. A vendor tool that HANGS also skips
// systeminformation: on Linux and Windows it calls the same nvidia-smi with no deadline, so it would only
// hang too (its scan runs in a child process, si-scan.ts, killed at the deadline).
import type { GpuInfo, GpuInventory } from '../../shared/types';
import type { Logger } from '../base/log';
import { detectAmd } from './detect-amd';
import { detectNvidia } from './detect-nvidia';
import { findOnPath } from './run-tool';
import { scanWithSystemInformation } from './si-scan';

export interface DetectOptions {
  env?: NodeJS.ProcessEnv;
  /** Deadline for each tool call (ms). */
  timeoutMs?: number;
  log?: Logger;
  /** Tests: skip systeminformation (it reads this machine, not the fake tools). */
  useSystemInformation?: boolean;
}

export const DEFAULT_DETECT_TIMEOUT_MS = 10_000;

export async function detectGpus(opts: DetectOptions = {}): Promise<GpuInventory> {
  const env = opts.env ?? process.env;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_DETECT_TIMEOUT_MS;
  const log = opts.log;
  const notes: string[] = [];
  let hung = false;

  const nvidiaSmi = findOnPath('nvidia-smi', env);
  if (nvidiaSmi) {
    const nv = await detectNvidia(nvidiaSmi, env, timeoutMs, log);
    notes.push(...nv.notes);
    hung ||= nv.hung;
    if (nv.gpus.length) return done(nv.gpus, notes, log);
  }

  const amd = await detectAmd(env, timeoutMs, log);
  notes.push(...amd.notes);
  hung ||= amd.hung;
  if (amd.gpus.length) return done(amd.gpus, notes, log);

  if (hung) {
    notes.push('Skipped the generic GPU scan because a vendor tool hung.');
  } else if (opts.useSystemInformation !== false) {
    const found = await scanWithSystemInformation(env, timeoutMs, log);
    notes.push(...found.remarks);
    if (found.gpus.length) {
      for (const g of found.gpus) {
        if (g.vendor === 'nvidia' && !nvidiaSmi) {
          notes.push(`"${g.model}" found, but nvidia-smi is not installed: install the NVIDIA driver so the app can read its VRAM and load exactly.`);
        }
        if (g.vendor === 'amd' && process.platform === 'linux') {
          notes.push(`"${g.model}" found, but neither amd-smi nor rocm-smi answered: install ROCm so the app can read its VRAM and load exactly.`);
        }
      }
      return done(found.gpus, notes, log);
    }
  }

  const why = notes.length ? notes.join(' ') : 'no NVIDIA (nvidia-smi), AMD (amd-smi, rocm-smi) or other GPU was detected.';
  const note = `No GPU found: ${why} This machine registers with gpu_count 0 and can serve CPU engines only.`;
  log?.info(note);
  return { gpus: [], note, detectedAt: Date.now() };
}

function done(gpus: GpuInfo[], notes: string[], log?: Logger): GpuInventory {
  const list = gpus.map((g, i) => ({ ...g, index: i }));
  for (const g of list) {
    log?.info(
      `GPU ${g.index}: ${g.model} (${(g.vramTotalMb / 1024).toFixed(1)} GB${g.sharedMemory ? ' shared' : ''}) via ${g.source}${g.mig ? `, MIG ${g.mig.profile} of GPU ${g.mig.parentIndex}` : ''}`,
    );
  }
  return { gpus: list, ...(notes.length ? { note: notes.join(' ') } : {}), detectedAt: Date.now() };
}
