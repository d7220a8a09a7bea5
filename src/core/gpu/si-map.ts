// systeminformation's graphics controllers -> our GpuInfo, for machines without a vendor tool:
// Apple Silicon, Intel, and NVIDIA/AMD cards whose vendor tool is not installed.
import { z } from 'zod';
import type { GpuInfo, GpuVendor } from '../../shared/types';
import { gpuSlug } from './slug';

const Controller = z.looseObject({
  vendor: z.string().nullish(),
  model: z.string().nullish(),
  bus: z.string().nullish(),
  vram: z.number().nullish(),
  vramDynamic: z.boolean().nullish(),
  driverVersion: z.string().nullish(),
  pciBus: z.string().nullish(),
  busAddress: z.string().nullish(),
});
export type SiController = z.infer<typeof Controller>;

/** Display adapters that cannot run an inference engine: VMs, remote consoles, server BMCs. */
const NOT_A_GPU = /vmware|virtualbox|\bqxl\b|red hat|cirrus|bochs|hyper-v|basic (display|render)|parallels|virtio|aspeed|matrox|llvmpipe|citrix|standard vga/i;

/** A dedicated card cannot have less than this; smaller figures are read errors (systeminformation#348). */
const MIN_PLAUSIBLE_VRAM_MB = 64;

export function vendorOf(text: string): GpuVendor {
  if (/nvidia/i.test(text)) return 'nvidia';
  if (/\bamd\b|\bati\b|advanced micro|radeon/i.test(text)) return 'amd';
  if (/apple/i.test(text)) return 'apple';
  if (/intel/i.test(text)) return 'intel';
  return 'other';
}

export interface SiMapResult {
  gpus: GpuInfo[];
  /** Plain-language remarks (ignored virtual adapters, unreadable VRAM). */
  remarks: string[];
}

/**
 * Maps raw controllers (validated here: they come from outside) to GPUs. Apple Silicon has unified
 * memory: the GPU can address the machine's RAM, so we report that, marked sharedMemory (the Go
 * provider also reports total unified memory as vram_gb). Dedicated cards come first.
 */
export function mapSiControllers(raw: unknown, totalMemMb: number): SiMapResult {
  const list = z.array(z.unknown()).safeParse(raw);
  const remarks: string[] = [];
  const gpus: GpuInfo[] = [];
  if (!list.success) return { gpus, remarks: ['systeminformation returned no controller list'] };
  for (const item of list.data) {
    const parsed = Controller.safeParse(item);
    if (!parsed.success) continue;
    const c = parsed.data;
    const model = (c.model ?? '').trim() || (c.vendor ?? '').trim();
    if (!model) continue;
    if (NOT_A_GPU.test(`${c.vendor ?? ''} ${model}`)) {
      remarks.push(`Ignored "${model}": a virtual or management display adapter, not a GPU that can run models.`);
      continue;
    }
    const vendor = vendorOf(`${c.vendor ?? ''} ${model}`);
    const shared = vendor === 'apple' || c.vramDynamic === true;
    let vram = typeof c.vram === 'number' && c.vram > 0 ? Math.round(c.vram) : 0;
    if (vendor === 'apple') vram = Math.round(totalMemMb);
    if (!shared && vram > 0 && vram < MIN_PLAUSIBLE_VRAM_MB) {
      remarks.push(`VRAM of "${model}" could not be read reliably (reported ${vram} MB); treated as unknown.`);
      vram = 0;
    }
    gpus.push({
      index: 0,
      vendor,
      model: vendor === 'apple' && !/^apple/i.test(model) ? `Apple ${model}` : model,
      slug: gpuSlug(model),
      vramTotalMb: vram,
      sharedMemory: shared,
      ...(c.driverVersion ? { driverVersion: c.driverVersion } : {}),
      ...(c.pciBus || c.busAddress ? { busId: (c.pciBus ?? c.busAddress) as string } : {}),
      source: 'systeminformation',
    });
  }
  // Dedicated first, then by VRAM: the first GPU is the one the hub hears about.
  gpus.sort((a, b) => Number(a.sharedMemory) - Number(b.sharedMemory) || b.vramTotalMb - a.vramTotalMb);
  gpus.forEach((g, i) => (g.index = i));
  return { gpus, remarks };
}
