// NVIDIA detection through nvidia-smi: the exact source for NVIDIA (VRAM, driver, compute
// capability, MIG); systeminformation reads the same tool, but with no timeout.
import os from 'node:os';
import type { GpuInfo } from '../../shared/types';
import type { Logger } from '../base/log';
import {
  DETECT_FIELDS,
  DETECT_FIELDS_OLD,
  migProfileMb,
  parseCudaVersion,
  parseDetectCsv,
  parseMigList,
  parseMigMemory,
  queryArgs,
  type NvGpuRow,
} from './nvidia-parse';
import { runTool, toolMessage } from './run-tool';
import { gpuSlug } from './slug';
import { explainNvidiaFailure } from './tool-notes';

export interface VendorResult {
  /** GPUs in tool order; `index` is renumbered by the caller. */
  gpus: GpuInfo[];
  notes: string[];
  /** The tool hung: do not call anything that would run it again without a deadline. */
  hung: boolean;
}

export async function detectNvidia(file: string, env: NodeJS.ProcessEnv, timeoutMs: number, log?: Logger): Promise<VendorResult> {
  const run = (args: string[]) => runTool(file, args, { env, timeoutMs });
  let fields: readonly string[] = DETECT_FIELDS;
  let res = await run(queryArgs(fields));
  if (!res.ok && !res.timedOut && /not a valid field/i.test(toolMessage(res))) {
    log?.info('nvidia-smi predates compute_cap/mig.mode.current; asking for the basic fields');
    fields = DETECT_FIELDS_OLD;
    res = await run(queryArgs(fields));
  }
  if (!res.ok) {
    const note = explainNvidiaFailure(res, timeoutMs);
    log?.warn(note);
    return { gpus: [], notes: [note], hung: res.timedOut };
  }
  const { rows, bad } = parseDetectCsv(res.stdout, fields);
  if (bad.length) log?.warn('nvidia-smi printed lines we could not read', { lines: bad });
  if (!rows.length) {
    const note = bad.length ? `nvidia-smi answered, but not with GPU rows we can read: "${bad[0]}".` : 'nvidia-smi lists no GPU.';
    return { gpus: [], notes: [note], hung: false };
  }

  // The default table carries the CUDA version and the real memory of each MIG slice.
  const table = await run([]);
  const cudaVersion = table.ok ? parseCudaVersion(table.stdout) : undefined;
  const migMemory = table.ok ? parseMigMemory(table.stdout) : new Map<string, number>();
  const notes: string[] = [];
  const slices = rows.some((r) => r.migEnabled) ? await listMig(run, log) : [];

  const gpus: GpuInfo[] = [];
  for (const row of rows) {
    const base = nvidiaInfo(row, cudaVersion);
    if (!row.migEnabled) {
      gpus.push(base);
      continue;
    }
    // MIG on: CUDA sees the slices, not the card, so each slice is a device of its own.
    const mine = slices.filter((s) => s.gpuIndex === row.index);
    if (!mine.length) {
      notes.push(
        `MIG is enabled on GPU ${row.index} (${row.name}) but it has no MIG instances, so no engine can use it: create instances (nvidia-smi mig -cgi … -C) or disable MIG.`,
      );
      continue;
    }
    for (const s of mine) {
      gpus.push({
        ...base,
        vramTotalMb: migMemory.get(`${s.gpuIndex}:${s.device}`) ?? migProfileMb(s.profile) ?? 0,
        uuid: s.uuid,
        mig: { parentIndex: row.index, profile: s.profile },
      });
    }
  }
  return { gpus, notes, hung: false };
}

async function listMig(run: (args: string[]) => ReturnType<typeof runTool>, log?: Logger) {
  const res = await run(['-L']);
  if (!res.ok) {
    log?.warn(`nvidia-smi -L failed: ${toolMessage(res)}`);
    return [];
  }
  return parseMigList(res.stdout);
}

function nvidiaInfo(row: NvGpuRow, cudaVersion: string | undefined): GpuInfo {
  // Unified-memory boards (GB10, Jetson) print [N/A] (some drivers 0) for memory.total: their GPU uses system RAM.
  const unified = row.memoryTotalMb === null || row.memoryTotalMb === 0;
  return {
    index: row.index,
    vendor: 'nvidia',
    model: row.name,
    slug: gpuSlug(row.name),
    vramTotalMb: unified ? Math.round(os.totalmem() / 1048576) : (row.memoryTotalMb ?? 0),
    sharedMemory: unified,
    ...(row.driverVersion ? { driverVersion: row.driverVersion } : {}),
    ...(cudaVersion ? { cudaVersion } : {}),
    ...(row.computeCapability ? { computeCapability: row.computeCapability } : {}),
    ...(row.busId ? { busId: row.busId } : {}),
    ...(row.uuid ? { uuid: row.uuid } : {}),
    source: 'nvidia-smi',
  };
}
