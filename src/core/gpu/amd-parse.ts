// Readers for AMD's tools: `amd-smi static|metric --json` and `rocm-smi … --json`.
// Both change shape between ROCm releases, so every leaf is read defensively:
//   amd-smi 6.0/6.1: a list of GPUs, sizes as strings ('24560 MB')
//   amd-smi 6.2+:    values as {"value": 24560, "unit": "MB"}
//   amd-smi 6.4+/7:  the list wrapped in {"gpu_data": [...]}
//   rocm-smi:        {"card0": {"Card Series": "...", "VRAM Total Memory (B)": "..."}, "system": {...}}
import { z } from 'zod';
import type { GpuDeviceSample } from '../../shared/types';

const Entry = z.looseObject({ gpu: z.number().int().nonnegative().optional() });
const EntryList = z.array(Entry);
const Wrapped = z.looseObject({ gpu_data: EntryList });
const RocmJson = z.record(z.string(), z.record(z.string(), z.unknown()));

type Json = Record<string, unknown>;

export class AmdParseError extends Error {}

/** JSON from a tool's stdout, skipping anything printed before it (Python warnings, banners). */
export function parseToolJson(stdout: string): unknown {
  const start = stdout.search(/^\s*[[{]/m);
  if (start < 0) throw new AmdParseError('no JSON in the output');
  try {
    return JSON.parse(stdout.slice(start));
  } catch (err) {
    throw new AmdParseError(`output is not valid JSON (${(err as Error).message})`);
  }
}

function amdEntries(json: unknown): Json[] {
  const list = EntryList.safeParse(json);
  if (list.success) return list.data;
  const wrapped = Wrapped.safeParse(json);
  if (wrapped.success) return wrapped.data.gpu_data;
  throw new AmdParseError('unexpected amd-smi JSON shape (neither a list nor {gpu_data: [...]})');
}

function at(obj: unknown, keys: string[]): unknown {
  let cur: unknown = obj;
  for (const k of keys) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Json)[k];
  }
  return cur;
}

function text(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' || /^n\/a$/i.test(t) ? undefined : t;
}

const TO_MB: Record<string, number> = { b: 1 / 1048576, kb: 1 / 1024, mb: 1, gb: 1024 };

/**
 * A number from any of amd-smi's spellings: 42, "42", "24560 MB", {"value": 42, "unit": "%"}, "N/A".
 * With `toMb`, memory units are converted to MiB (amd-smi's "MB" is MiB: it divides bytes by 1024²).
 */
export function amdNumber(v: unknown, toMb = false): number | null {
  let value: number | null = null;
  let unit = '';
  if (typeof v === 'number' && Number.isFinite(v)) value = v;
  else if (typeof v === 'string') {
    const m = /^\s*(-?\d+(?:\.\d+)?)\s*([a-zA-Z%°]*)/.exec(v);
    if (m) {
      value = Number(m[1]);
      unit = m[2] ?? '';
    }
  } else if (v !== null && typeof v === 'object' && 'value' in v) {
    const inner = (v as Json).value;
    value = typeof inner === 'number' && Number.isFinite(inner) ? inner : amdNumber(inner);
    unit = typeof (v as Json).unit === 'string' ? ((v as Json).unit as string) : '';
  }
  if (value === null) return null;
  if (toMb) {
    const factor = TO_MB[unit.toLowerCase()] ?? 1;
    return Math.round(value * factor);
  }
  return value;
}

export interface AmdGpuRow {
  index: number;
  name: string;
  vramTotalMb: number | null;
  busId?: string;
  driverVersion?: string;
  uuid?: string;
}

/** `amd-smi static --json`. */
export function parseAmdStatic(json: unknown): AmdGpuRow[] {
  return amdEntries(json).map((e, i) => {
    const deviceId = text(at(e, ['asic', 'device_id']));
    return {
      index: typeof e.gpu === 'number' ? e.gpu : i,
      name: amdName(text(at(e, ['asic', 'market_name'])), deviceId),
      vramTotalMb: amdNumber(at(e, ['vram', 'size']), true),
      busId: text(at(e, ['bus', 'bdf'])),
      driverVersion: text(at(e, ['driver', 'version'])),
      uuid: text(at(e, ['asic', 'asic_serial'])),
    };
  });
}

/** `amd-smi metric -u -p -t -m --json` (fan only when present). */
export function parseAmdMetric(json: unknown): GpuDeviceSample[] {
  return amdEntries(json).map((e, i) => {
    const util = amdNumber(at(e, ['usage', 'gfx_activity']));
    const fan = amdNumber(at(e, ['fan', 'usage']));
    return {
      index: typeof e.gpu === 'number' ? e.gpu : i,
      utilization: util === null ? null : clamp01(util / 100),
      vramUsedMb: amdNumber(at(e, ['mem_usage', 'used_vram']), true),
      vramTotalMb: amdNumber(at(e, ['mem_usage', 'total_vram']), true),
      temperatureC: amdNumber(at(e, ['temperature', 'edge'])) ?? amdNumber(at(e, ['temperature', 'hotspot'])),
      powerW: amdNumber(at(e, ['power', 'socket_power'])),
      powerLimitW: amdNumber(at(e, ['power', 'power_limit'])) ?? amdNumber(at(e, ['limit', 'socket_power'])),
      fanPercent: fan,
    };
  });
}

/** rocm-smi's pci.ids lookup sometimes fails and prints the device id ('Card series: 0x744c'). */
function amdName(name: string | undefined, deviceId: string | undefined): string {
  if (name && !/^0x[0-9a-f]+$/i.test(name)) return name;
  const id = name ?? deviceId;
  return id ? `AMD GPU ${id}` : 'AMD GPU';
}

function rocmCards(json: unknown): { cards: [number, Json][]; system: Json } {
  const parsed = RocmJson.safeParse(json);
  if (!parsed.success) throw new AmdParseError('unexpected rocm-smi JSON shape (expected {"card0": {...}})');
  const cards: [number, Json][] = [];
  for (const [key, value] of Object.entries(parsed.data)) {
    const m = /^card(\d+)$/.exec(key);
    if (m) cards.push([Number(m[1]), value]);
  }
  cards.sort((a, b) => a[0] - b[0]);
  return { cards, system: parsed.data.system ?? {} };
}

function rocmField(card: Json, ...names: string[]): unknown {
  for (const n of names) {
    if (card[n] !== undefined) return card[n];
  }
  return undefined;
}

/** `rocm-smi --showproductname --showmeminfo vram --showbus --showdriverversion --json`. */
export function parseRocmStatic(json: unknown): AmdGpuRow[] {
  const { cards, system } = rocmCards(json);
  const driver = text(system['Driver version']);
  return cards.map(([index, card]) => {
    const bytes = amdNumber(rocmField(card, 'VRAM Total Memory (B)'));
    return {
      index,
      name: amdName(text(rocmField(card, 'Card Series', 'Card series', 'Device Name')), text(rocmField(card, 'Card Model', 'Card model', 'Device ID'))),
      vramTotalMb: bytes === null ? null : Math.round(bytes / 1048576),
      busId: text(rocmField(card, 'PCI Bus')),
      driverVersion: driver,
      uuid: text(rocmField(card, 'Unique ID')),
    };
  });
}

/** `rocm-smi --showuse --showmeminfo vram --showtemp --showpower --showmaxpower --showfan --json`. */
export function parseRocmMetric(json: unknown): GpuDeviceSample[] {
  const { cards } = rocmCards(json);
  return cards.map(([index, card]) => {
    const util = amdNumber(rocmField(card, 'GPU use (%)'));
    const used = amdNumber(rocmField(card, 'VRAM Total Used Memory (B)'));
    const total = amdNumber(rocmField(card, 'VRAM Total Memory (B)'));
    return {
      index,
      utilization: util === null ? null : clamp01(util / 100),
      vramUsedMb: used === null ? null : Math.round(used / 1048576),
      vramTotalMb: total === null ? null : Math.round(total / 1048576),
      temperatureC: amdNumber(rocmField(card, 'Temperature (Sensor edge) (C)', 'Temperature (Sensor junction) (C)')),
      powerW: amdNumber(rocmField(card, 'Average Graphics Package Power (W)', 'Current Socket Graphics Package Power (W)')),
      powerLimitW: amdNumber(rocmField(card, 'Max Graphics Package Power (W)')),
      fanPercent: amdNumber(rocmField(card, 'Fan speed (%)')),
    };
  });
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
