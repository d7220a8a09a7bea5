// The `hardware` block of the hub's register message, built from a GPU inventory.
import type { GpuInventory } from '../../shared/types';

export interface HubHardware {
  gpu_type: string; // slug: 'rtx3080', 'h200', 'rx7900xtx', 'm2max'; 'cpu' without a GPU
  gpu_model: string; // 'NVIDIA GeForce RTX 3080'; 'none' without a GPU
  /** VRAM of ONE GPU (the primary one), in whole GB, as the Go provider reports it. */
  vram_gb: number;
  gpu_count: number;
  compute_capability?: string;
  driver_version?: string;
  cuda_version?: string;
  serving_engine: string;
}

/**
 * Like the Go provider: type, model and VRAM of the first (primary) GPU, and the count of all.
 * VRAM is rounded to the nearest GB (81559 MiB on an H100 -> 80; the Go code floors it to 79),
 * never 0 for a GPU that has memory. MIG slices count as GPUs: each one serves an engine.
 */
export function hardwareBlock(inv: GpuInventory, servingEngine: string): HubHardware {
  const primary = inv.gpus[0];
  if (!primary) {
    return { gpu_type: 'cpu', gpu_model: 'none', vram_gb: 0, gpu_count: 0, serving_engine: servingEngine };
  }
  const vramGb = primary.vramTotalMb > 0 ? Math.max(1, Math.round(primary.vramTotalMb / 1024)) : 0;
  return {
    gpu_type: primary.slug,
    gpu_model: primary.model,
    vram_gb: vramGb,
    gpu_count: inv.gpus.length,
    ...(primary.computeCapability ? { compute_capability: primary.computeCapability } : {}),
    ...(primary.driverVersion ? { driver_version: primary.driverVersion } : {}),
    ...(primary.cudaVersion ? { cuda_version: primary.cudaVersion } : {}),
    serving_engine: servingEngine,
  };
}
