// The `hardware` block of the hub's register and heartbeat messages, in the Go provider's form
// (HardwareInfo + detectNvidiaHardware in internal/computing/inference_client.go): the primary GPU's
// type and model, its VRAM in whole GiB (floored; a reading under 1 GiB is 1), the count of all GPUs, and
// strings that are "" when unknown. VRAM not known is 0, never a guess: a 1 GB card is below the hub's 8 GB
// minimum and gets every model refused (parseNvidiaVRAMGB, gpu_vram_test.go); unified-memory boards report
// the system's memory (detection does that). No GPU: no block at all (Go sends a nil *HardwareInfo).
import type { EngineType, GpuInfo, GpuInventory } from '../../shared/types';
import { SERVING_ENGINES, type HubHardware, type ServingEngine } from '../protocol/messages';

export type { HubHardware } from '../protocol/messages';

/**
 * "NVIDIA GeForce RTX 3080" -> "RTX 3080", "NVIDIA Tesla T4" -> "T4", "NVIDIA H200" -> "H200" (Go's
 * rules); "AMD Radeon RX 7900 XTX" -> "Radeon RX 7900 XTX"; Apple "Apple M2 Max" -> "m2_max" (Go's
 * detectAppleSiliconHardware).
 */
export function gpuTypeOf(gpu: Pick<GpuInfo, 'model' | 'vendor'>): string {
  const name = gpu.model.trim();
  if (gpu.vendor === 'apple')
    return name
      .toLowerCase()
      .replace(/apple /g, '')
      .replace(/ /g, '_');
  if (name.includes('GeForce')) return name.replace('NVIDIA GeForce ', '');
  if (name.includes('Tesla')) return name.replace('NVIDIA ', '').replace('Tesla ', '');
  if (name.includes('NVIDIA')) return name.replace('NVIDIA ', '');
  if (name.startsWith('AMD ')) return name.slice(4);
  return name;
}

/** Our engine types in the Go set (sglang, vllm, ollama, llamacpp, tgi, unknown). */
export function servingEngineOf(type: EngineType | undefined): ServingEngine {
  return (SERVING_ENGINES as readonly string[]).includes(type ?? '') ? (type as ServingEngine) : 'unknown';
}

/** The most common known engine among the endpoints (Go's detectServingEngine), else "unknown". */
export function mostCommonEngine(types: Array<EngineType | undefined>): ServingEngine {
  const counts = new Map<ServingEngine, number>();
  for (const t of types) {
    const e = servingEngineOf(t);
    if (e !== 'unknown') counts.set(e, (counts.get(e) ?? 0) + 1);
  }
  let best: ServingEngine = 'unknown';
  let n = 0;
  for (const [e, c] of counts) if (c > n) [best, n] = [e, c];
  return best;
}

/** Whole GiB of a MiB figure: 0 when not known (0 or less), at least 1 for a real reading. */
export function vramGb(mb: number): number {
  return Number.isFinite(mb) && mb > 0 ? Math.max(1, Math.floor(mb / 1024)) : 0;
}

export function hardwareBlock(inv: GpuInventory, servingEngine: ServingEngine): HubHardware | undefined {
  const primary = inv.gpus[0];
  if (!primary) return undefined;
  return {
    gpu_type: gpuTypeOf(primary),
    gpu_model: primary.model,
    vram_gb: vramGb(primary.vramTotalMb),
    gpu_count: inv.gpus.length,
    compute_capability: primary.computeCapability ?? '',
    driver_version: primary.driverVersion ?? '',
    cuda_version: primary.cudaVersion ?? '',
    serving_engine: servingEngine,
  };
}
