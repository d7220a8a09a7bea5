// The readers of vendor tool output, on real captures and on the format variants they must survive.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gpuSlug } from '../../../src/core/gpu/slug';
import { amdNumber, AmdParseError, parseAmdMetric, parseAmdStatic, parseRocmStatic, parseToolJson } from '../../../src/core/gpu/amd-parse';
import {
  cellNumber,
  DETECT_FIELDS,
  migProfileMb,
  parseComputeApps,
  parseCudaVersion,
  parseDetectCsv,
  parseMigList,
  parseMigMemory,
  parseSampleLine,
} from '../../../src/core/gpu/nvidia-parse';
import { fixture } from '../../support/gpu/fake-tools';

const read = (rel: string): string => fs.readFileSync(fixture(rel), 'utf8');

describe('gpuSlug', () => {
  it.each([
    ['NVIDIA GeForce RTX 3080', 'rtx3080'],
    ['NVIDIA H200', 'h200'],
    ['H100 80GB HBM3', 'h100'],
    ['NVIDIA H100 80GB HBM3', 'h100'],
    ['AMD Radeon RX 7900 XTX', 'rx7900xtx'],
    ['Apple M2 Max', 'm2max'],
    ['NVIDIA GeForce RTX 4080 SUPER', 'rtx4080super'],
    ['NVIDIA A100-SXM4-80GB', 'a100'],
    ['Tesla V100-SXM2-16GB', 'v100'],
    ['NVIDIA RTX 6000 Ada Generation', 'rtx6000ada'],
    ['Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]', 'rx6800'],
    ['Intel(R) Arc(TM) A770 Graphics', 'arca770'],
    ['AMD Instinct MI300X', 'mi300x'],
    ['', 'unknown'],
  ])('%s -> %s', (model, slug) => {
    expect(gpuSlug(model)).toBe(slug);
  });
});

describe('nvidia-smi readers', () => {
  it('cells: numbers, units tolerated, every kind of placeholder is null', () => {
    expect(cellNumber('10240')).toBe(10240);
    expect(cellNumber('39.32 W')).toBe(39.32);
    for (const c of ['[N/A]', 'N/A', '[Not Supported]', '[Unknown Error]', '[GPU is lost]', '', undefined]) expect(cellNumber(c)).toBeNull();
  });

  it('detection CSV: bad lines are set aside, good ones kept', () => {
    const text = `${read('nvidia/two-gpu/query-gpu.csv')}Unable to determine the device handle for GPU0000:02:00.0: Unknown Error\n`;
    const { rows, bad } = parseDetectCsv(text, DETECT_FIELDS);
    expect(rows.map((r) => r.name)).toEqual(['NVIDIA GeForce RTX 4080 SUPER', 'NVIDIA GeForce RTX 2080 SUPER']);
    expect(bad).toEqual(['Unable to determine the device handle for GPU0000:02:00.0: Unknown Error']);
  });

  it('unified-memory boards print [N/A] for memory.total: kept as unknown, not 0', () => {
    const { rows } = parseDetectCsv('0, NVIDIA GB10, GPU-1, 0000000F:01:00.0, [N/A], 580.95.05, 12.1, [N/A]\n', DETECT_FIELDS);
    expect(rows[0]?.memoryTotalMb).toBeNull();
  });

  it('MIG: -L slices and their real memory from the table', () => {
    expect(parseMigList(read('nvidia/h100-mig/list.txt')).map((s) => [s.gpuIndex, s.device, s.profile])).toEqual([
      [0, 0, '3g.40gb'],
      [0, 1, '2g.20gb'],
      [0, 2, '1g.10gb'],
      [0, 3, '1g.10gb'],
    ]);
    expect([...parseMigMemory(read('nvidia/h100-mig/table.txt'))]).toEqual([
      ['0:0', 40448],
      ['0:1', 20096],
      ['0:2', 9984],
      ['0:3', 9984],
    ]);
    expect(migProfileMb('1g.10gb+me')).toBe(10240);
    expect(parseMigMemory(read('nvidia/rtx3080/table.txt')).size).toBe(0);
  });

  it('CUDA version from the table and from --version, including driver 610 names', () => {
    expect(parseCudaVersion(read('nvidia/rtx3080/table.txt'))).toBe('13.0');
    expect(parseCudaVersion(read('nvidia/driver-610/table-head.txt'))).toBe('13.3');
    expect(parseCudaVersion(read('nvidia/driver-610/version.txt'))).toBe('13.3'); // skips 'Deprecated, see …'
    expect(parseCudaVersion('no banner')).toBeUndefined();
  });

  it('sample lines: utilization as 0..1, placeholders null, other lines rejected', () => {
    expect(parseSampleLine('0, 100, 19818, 81559, 59, 631.95, 700.00, [N/A]')).toEqual({
      index: 0,
      utilization: 1,
      vramUsedMb: 19818,
      vramTotalMb: 81559,
      temperatureC: 59,
      powerW: 631.95,
      powerLimitW: 700,
      fanPercent: null,
    });
    expect(parseSampleLine('Failed to initialize NVML: Driver/library version mismatch')).toBeNull();
    expect(parseSampleLine('x, 1, 2, 3, 4, 5, 6, 7')).toBeNull();
  });

  it('compute apps: Windows paths with commas, [N/A] memory under WDDM', () => {
    expect(parseComputeApps('12444, C:\\Program Files\\A, B\\app.exe, GPU-1, [N/A]\n')).toEqual([
      { pid: 12444, name: 'C:\\Program Files\\A, B\\app.exe', gpuUuid: 'GPU-1', usedMemoryMb: null },
    ]);
  });
});

describe('amd-smi / rocm-smi readers', () => {
  it('numbers in every amd-smi spelling; memory units to MiB', () => {
    expect(amdNumber(42)).toBe(42);
    expect(amdNumber('24560 MB', true)).toBe(24560);
    expect(amdNumber({ value: 24, unit: 'GB' }, true)).toBe(24576);
    expect(amdNumber({ value: 25753026560, unit: 'B' }, true)).toBe(24560);
    expect(amdNumber('N/A')).toBeNull();
    expect(amdNumber({ value: 'N/A', unit: '%' })).toBeNull();
  });

  it('the same GPU in the three amd-smi generations of JSON', () => {
    const v26 = JSON.parse(read('amd/rx7900xtx/amd-smi-static.json')) as { gpu_data: Record<string, unknown>[] };
    const entry = v26.gpu_data[0] as Record<string, unknown>;
    const bare = [entry]; // 6.2-6.3: a plain list
    const old = [{ ...entry, vram: { size: '24560 MB' } }]; // 6.0-6.1: strings with units
    for (const shape of [v26, bare, old]) {
      expect(parseAmdStatic(shape)).toEqual([
        { index: 0, name: 'AMD Radeon RX 7900 XTX', vramTotalMb: 24560, busId: '0000:63:00.0', driverVersion: '6.12.12' },
      ]);
    }
    expect(() => parseAmdStatic({ something: 'else' })).toThrow(AmdParseError);
  });

  it('metric: temperature falls back to hotspot; missing readings are null', () => {
    const [d] = parseAmdMetric([
      { gpu: 0, usage: { gfx_activity: { value: 42, unit: '%' } }, temperature: { edge: 'N/A', hotspot: { value: 41, unit: 'C' } } },
    ]);
    expect(d).toEqual({
      index: 0,
      utilization: 0.42,
      vramUsedMb: null,
      vramTotalMb: null,
      temperatureC: 41,
      powerW: null,
      powerLimitW: null,
      fanPercent: null,
    });
  });

  it('tool JSON after Python warnings on the same stream', () => {
    const out = `/usr/lib/python3.14/site-packages/amdsmi/amdsmi_interface.py:3569: SyntaxWarning: 'return' in a 'finally' block\n  return return_dictionary\n${read('amd/rx7900xtx/amd-smi-static.json')}`;
    expect(parseAmdStatic(parseToolJson(out))[0]?.name).toBe('AMD Radeon RX 7900 XTX');
    expect(() => parseToolJson('Traceback (most recent call last):')).toThrow(AmdParseError);
  });

  it('rocm-smi: pci.ids lookup failure (card series printed as 0x744c) gives an honest name', () => {
    const rows = parseRocmStatic({ card0: { 'Card series': '0x744c', 'Card model': '0x2422', 'VRAM Total Memory (B)': '25753026560' } });
    expect(rows[0]).toMatchObject({ name: 'AMD GPU 0x744c', vramTotalMb: 24560 });
  });
});
