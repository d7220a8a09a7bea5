// Readers for nvidia-smi output: the --query-gpu CSV, `-L` (MIG slices), the default table
// (CUDA version, MIG slice memory) and --query-compute-apps. Pure functions over text.
import type { GpuDeviceSample } from '../../shared/types';

/** Fields read once at detection. compute_cap and mig.mode.current need driver >= 510. */
export const DETECT_FIELDS = ['index', 'name', 'uuid', 'pci.bus_id', 'memory.total', 'driver_version', 'compute_cap', 'mig.mode.current'] as const;
/** Fallback for old drivers that answer 'Field "compute_cap" is not a valid field to query.' */
export const DETECT_FIELDS_OLD = ['index', 'name', 'uuid', 'pci.bus_id', 'memory.total', 'driver_version'] as const;
/** Fields of every live sample, in this order. */
export const SAMPLE_FIELDS = ['index', 'utilization.gpu', 'memory.used', 'memory.total', 'temperature.gpu', 'power.draw', 'power.limit', 'fan.speed'] as const;
export const PROCESS_FIELDS = ['pid', 'process_name', 'gpu_uuid', 'used_memory'] as const;

export const CSV_FORMAT = '--format=csv,noheader,nounits';

export function queryArgs(fields: readonly string[]): string[] {
  return [`--query-gpu=${fields.join(',')}`, CSV_FORMAT];
}

/**
 * A numeric cell, or null for what nvidia-smi prints when it has no value:
 * '[N/A]', 'N/A' (old drivers), '[Not Supported]', '[Unknown Error]', '[GPU is lost]'.
 * Units are tolerated in case a caller forgot nounits ('10240 MiB', '39.32 W', '38 %').
 */
export function cellNumber(cell: string | undefined): number | null {
  if (cell === undefined) return null;
  const t = cell.trim();
  if (t === '' || t.startsWith('[') || /^n\/a$/i.test(t)) return null;
  const m = /^(-?\d+(?:\.\d+)?)(?:\s*(?:MiB|%|W|C))?$/.exec(t);
  return m ? Number(m[1]) : null;
}

/** A text cell, or undefined for '[N/A]'-style placeholders. */
export function cellText(cell: string | undefined): string | undefined {
  if (cell === undefined) return undefined;
  const t = cell.trim();
  if (t === '' || t.startsWith('[') || /^n\/a$/i.test(t)) return undefined;
  return t;
}

function splitRow(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

export interface NvGpuRow {
  index: number;
  name: string;
  uuid?: string;
  busId?: string;
  /** null when nvidia-smi has no figure: unified-memory boards (GB10, Jetson) print [N/A]. */
  memoryTotalMb: number | null;
  driverVersion?: string;
  computeCapability?: string;
  migEnabled: boolean;
}

/** Parses the detection CSV. Lines that do not fit are returned in `bad` (logged by the caller). */
export function parseDetectCsv(text: string, fields: readonly string[]): { rows: NvGpuRow[]; bad: string[] } {
  const rows: NvGpuRow[] = [];
  const bad: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cells = splitRow(line);
    const get = (f: string): string | undefined => cells[fields.indexOf(f)];
    const index = Number(get('index'));
    const name = cellText(get('name'));
    if (cells.length !== fields.length || !Number.isInteger(index) || index < 0 || !name) {
      bad.push(line.slice(0, 200));
      continue;
    }
    const cc = cellText(get('compute_cap'));
    rows.push({
      index,
      name,
      uuid: cellText(get('uuid')),
      busId: cellText(get('pci.bus_id')),
      memoryTotalMb: cellNumber(get('memory.total')),
      driverVersion: cellText(get('driver_version')),
      computeCapability: cc && /^\d+\.\d+$/.test(cc) ? cc : undefined,
      migEnabled: /^enabled$/i.test(cellText(get('mig.mode.current')) ?? ''),
    });
  }
  return { rows, bad };
}

export interface MigSlice {
  gpuIndex: number;
  /** 'Device N' under its GPU in `nvidia-smi -L`; the 'MIG Dev' column of the table. */
  device: number;
  profile: string; // '3g.40gb'
  uuid: string; // 'MIG-…'
}

/**
 * `nvidia-smi -L`:
 *   GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-…)
 *     MIG 3g.40gb     Device  0: (UUID: MIG-…)
 */
export function parseMigList(text: string): MigSlice[] {
  const slices: MigSlice[] = [];
  let gpu = -1;
  for (const line of text.split(/\r?\n/)) {
    const g = /^GPU (\d+):/.exec(line);
    if (g) {
      gpu = Number(g[1]);
      continue;
    }
    const m = /^\s+MIG\s+(\S+)\s+Device\s+(\d+):\s*\(UUID:\s*(MIG-[^)\s]+)\)/.exec(line);
    if (m && gpu >= 0) slices.push({ gpuIndex: gpu, device: Number(m[2]), profile: m[1] ?? '', uuid: m[3] ?? '' });
  }
  return slices;
}

/** Nominal memory of a MIG profile name: '3g.40gb' -> 40960 MiB, '1g.10gb+me' -> 10240. */
export function migProfileMb(profile: string): number | null {
  const m = /(\d+)gb/.exec(profile);
  return m ? Number(m[1]) * 1024 : null;
}

/**
 * CUDA version from the default table ('CUDA Version: 13.1', newer drivers 'CUDA UMD Version: 13.3')
 * or from `-q` ('CUDA Version : 12.2'; 610+ prints 'CUDA version : Deprecated, …' before the UMD line).
 */
export function parseCudaVersion(text: string): string | undefined {
  for (const m of text.matchAll(/CUDA (?:UMD )?Version\s*:\s*(\S+)/gi)) {
    if (m[1] && /^\d+(\.\d+)+$/.test(m[1])) return m[1];
  }
  return undefined;
}

/**
 * Real memory of each MIG slice from the 'MIG devices:' block of the default table, keyed
 * 'gpu:dev'. The nominal profile size overstates it ('3g.40gb' is 40448 MiB on an H100).
 *   |  0    2   0   0  |           11091MiB / 40448MiB    | 60      0 | …
 */
export function parseMigMemory(table: string): Map<string, number> {
  const out = new Map<string, number>();
  const start = table.indexOf('MIG devices:');
  if (start < 0) return out;
  for (const line of table.slice(start).split(/\r?\n/)) {
    const m = /^\|\s*(\d+)\s+\d+\s+\d+\s+(\d+)\s*\|\s*\d+MiB\s*\/\s*(\d+)MiB/.exec(line);
    if (m) out.set(`${m[1]}:${m[2]}`, Number(m[3]));
    if (/Processes:/.test(line)) break;
  }
  return out;
}

/** One line of the sampling query (SAMPLE_FIELDS order) -> a device sample, or null if not one. */
export function parseSampleLine(line: string): GpuDeviceSample | null {
  const cells = splitRow(line);
  if (cells.length !== SAMPLE_FIELDS.length) return null;
  const index = Number(cells[0]);
  if (!Number.isInteger(index) || index < 0) return null;
  const util = cellNumber(cells[1]);
  return {
    index,
    utilization: util === null ? null : Math.min(1, Math.max(0, util / 100)),
    vramUsedMb: cellNumber(cells[2]),
    vramTotalMb: cellNumber(cells[3]),
    temperatureC: cellNumber(cells[4]),
    powerW: cellNumber(cells[5]),
    powerLimitW: cellNumber(cells[6]),
    fanPercent: cellNumber(cells[7]),
  };
}

export interface NvProcessRow {
  pid: number;
  name: string;
  gpuUuid?: string;
  usedMemoryMb: number | null;
}

/**
 * --query-compute-apps=pid,process_name,gpu_uuid,used_memory. A process name may itself contain
 * ', ' (Windows paths), so the pid is read from the front and uuid and memory from the back.
 * Windows (WDDM) prints [N/A] for used memory.
 */
export function parseComputeApps(text: string): NvProcessRow[] {
  const out: NvProcessRow[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const cells = line.split(', ');
    if (cells.length < 4) continue;
    const pid = Number(cells[0]?.trim());
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const used = cells[cells.length - 1];
    const uuid = cells[cells.length - 2];
    const name = cells
      .slice(1, cells.length - 2)
      .join(', ')
      .trim();
    out.push({ pid, name, gpuUuid: cellText(uuid), usedMemoryMb: cellNumber(used) });
  }
  return out;
}
