// AMD detection: amd-smi (current ROCm tool) first, rocm-smi (deprecated, still on many machines)
// second. Both read the amdgpu driver directly, so their VRAM is exact, unlike Windows' WMI figure
// that stops at 4 GB ("AMD shown as 4 GB").
import type { GpuInfo } from '../../shared/types';
import type { Logger } from '../base/log';
import { AmdParseError, parseAmdStatic, parseRocmStatic, parseToolJson, type AmdGpuRow } from './amd-parse';
import type { VendorResult } from './detect-nvidia';
import { findOnPath, runTool, type ToolResult } from './run-tool';
import { gpuSlug } from './slug';
import { explainAmdFailure } from './tool-notes';

export const AMD_SMI_STATIC = ['static', '--json'];
export const ROCM_SMI_STATIC = ['--showproductname', '--showmeminfo', 'vram', '--showbus', '--showdriverversion', '--json'];

/** An integrated AMD GPU beside a discrete one only has a carve-out of system RAM (e.g. 64-512 MB). */
const IGPU_MAX_MB = 1024;
const DGPU_MIN_MB = 4096;

export async function detectAmd(env: NodeJS.ProcessEnv, timeoutMs: number, log?: Logger): Promise<VendorResult> {
  const notes: string[] = [];
  let hung = false;
  const tools: [string, string[], (json: unknown) => AmdGpuRow[], 'amd-smi' | 'rocm-smi'][] = [
    ['amd-smi', AMD_SMI_STATIC, parseAmdStatic, 'amd-smi'],
    ['rocm-smi', ROCM_SMI_STATIC, parseRocmStatic, 'rocm-smi'],
  ];
  for (const [name, args, parse, source] of tools) {
    const file = findOnPath(name, env);
    if (!file) continue;
    const res: ToolResult = await runTool(file, args, { env, timeoutMs });
    if (!res.ok) {
      const note = explainAmdFailure(name, res, timeoutMs);
      log?.warn(note);
      notes.push(note);
      hung ||= res.timedOut;
      continue; // amd-smi failing is a reason to try rocm-smi
    }
    let rows: AmdGpuRow[];
    try {
      rows = parse(parseToolJson(res.stdout));
    } catch (err) {
      const note = `${name} answered, but its JSON could not be read (${err instanceof AmdParseError ? err.message : String(err)}).`;
      log?.warn(note);
      notes.push(note);
      continue;
    }
    if (!rows.length) continue;
    const gpus = dropIntegrated(
      rows.map((r) => amdInfo(r, source)),
      notes,
    );
    // The tool that answered wins; earlier failures are no longer news.
    return { gpus, notes: notes.filter((n) => !n.startsWith('amd-smi')), hung: false };
  }
  return { gpus: [], notes, hung };
}

function amdInfo(row: AmdGpuRow, source: 'amd-smi' | 'rocm-smi'): GpuInfo {
  return {
    index: row.index,
    vendor: 'amd',
    model: row.name,
    slug: gpuSlug(row.name),
    vramTotalMb: row.vramTotalMb ?? 0,
    sharedMemory: false,
    ...(row.driverVersion ? { driverVersion: row.driverVersion } : {}),
    ...(row.busId ? { busId: row.busId } : {}),
    ...(row.uuid ? { uuid: row.uuid } : {}),
    source,
  };
}

/** Hides a Ryzen iGPU next to a discrete Radeon: engines run on the discrete card. */
function dropIntegrated(gpus: GpuInfo[], notes: string[]): GpuInfo[] {
  if (!gpus.some((g) => g.vramTotalMb >= DGPU_MIN_MB)) return gpus;
  return gpus.filter((g) => {
    if (g.vramTotalMb > 0 && g.vramTotalMb < IGPU_MAX_MB) {
      notes.push(`Ignored the integrated GPU "${g.model}" (${g.vramTotalMb} MB carved from system RAM): engines run on the discrete GPU.`);
      return false;
    }
    return true;
  });
}
