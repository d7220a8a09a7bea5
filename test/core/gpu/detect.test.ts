// detectGpus + hardwareBlock (the Go provider's HardwareInfo form: vendor prefix stripped from gpu_type,
// VRAM floored to whole GiB, "" for unknown strings, no block without a GPU) against fake vendor tools
// replaying real captures, and on this machine (no GPU) for real.
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { detectGpus } from '../../../src/core/gpu/detect';
import { hardwareBlock } from '../../../src/core/gpu/hardware';
import { findOnPath } from '../../../src/core/gpu/run-tool';
import { mapSiControllers } from '../../../src/core/gpu/si-map';
import { memoryLog } from '../../../src/core/base/log';
import { processesUsing } from '../../support/processes';
import { fixture, makeFakeBin, writeFakeAmdSmi, writeFakeNvidiaSmi, writeFakeRocmSmi, type FakeBin } from '../../support/gpu/fake-tools';

const bins: FakeBin[] = [];
function bin(): FakeBin {
  const b = makeFakeBin();
  bins.push(b);
  return b;
}
afterEach(() => {
  while (bins.length) bins.pop()?.cleanup();
});

describe('NVIDIA via nvidia-smi', () => {
  it('RTX 3080 10 GB: one GPU, exact VRAM, driver, CUDA and compute capability', async () => {
    const b = bin();
    writeFakeNvidiaSmi(b, fixture('nvidia/rtx3080'));
    const inv = await detectGpus({ env: b.env(), timeoutMs: 5000 });
    expect(inv.note).toBeUndefined();
    expect(inv.gpus).toEqual([
      {
        index: 0,
        vendor: 'nvidia',
        model: 'NVIDIA GeForce RTX 3080',
        slug: 'rtx3080',
        vramTotalMb: 10240,
        sharedMemory: false,
        driverVersion: '580.126.09',
        cudaVersion: '13.0',
        computeCapability: '8.6',
        busId: '00000000:01:00.0',
        uuid: 'GPU-00000000-0000-0000-0000-000000000000',
        source: 'nvidia-smi',
      },
    ]);
    expect(hardwareBlock(inv, 'llamacpp')).toEqual({
      gpu_type: 'RTX 3080',
      gpu_model: 'NVIDIA GeForce RTX 3080',
      vram_gb: 10,
      gpu_count: 1,
      compute_capability: '8.6',
      driver_version: '580.126.09',
      cuda_version: '13.0',
      serving_engine: 'llamacpp',
    });
  });

  it('two different cards: both listed in index order; the block describes GPU 0 and counts both', async () => {
    const b = bin();
    writeFakeNvidiaSmi(b, fixture('nvidia/two-gpu'));
    const inv = await detectGpus({ env: b.env() });
    expect(inv.gpus.map((g) => [g.index, g.model, g.slug, g.vramTotalMb, g.computeCapability, g.busId])).toEqual([
      [0, 'NVIDIA GeForce RTX 4080 SUPER', 'rtx4080super', 16376, '8.9', '00000000:01:00.0'],
      [1, 'NVIDIA GeForce RTX 2080 SUPER', 'rtx2080super', 8192, '7.5', '00000000:0C:00.0'],
    ]);
    expect(inv.gpus.every((g) => g.cudaVersion === '13.2' && g.driverVersion === '595.71.05')).toBe(true);
    expect(hardwareBlock(inv, 'vllm')).toEqual({
      gpu_type: 'RTX 4080 SUPER',
      gpu_model: 'NVIDIA GeForce RTX 4080 SUPER',
      vram_gb: 15, // 16376 MiB floored, as Go's vramMiB / 1024
      gpu_count: 2,
      compute_capability: '8.9',
      driver_version: '595.71.05',
      cuda_version: '13.2',
      serving_engine: 'vllm',
    });
  });

  it('H100 with MIG: each slice is a device, with its real memory from the MIG table', async () => {
    const b = bin();
    writeFakeNvidiaSmi(b, fixture('nvidia/h100-mig'));
    const inv = await detectGpus({ env: b.env() });
    expect(inv.gpus.map((g) => [g.index, g.model, g.mig, g.vramTotalMb, g.uuid])).toEqual([
      [0, 'NVIDIA H100 80GB HBM3', { parentIndex: 0, profile: '3g.40gb' }, 40448, 'MIG-00000000-0000-0000-0000-000000000000'],
      [1, 'NVIDIA H100 80GB HBM3', { parentIndex: 0, profile: '2g.20gb' }, 20096, 'MIG-00000001-0000-0000-0000-000000000001'],
      [2, 'NVIDIA H100 80GB HBM3', { parentIndex: 0, profile: '1g.10gb' }, 9984, 'MIG-00000002-0000-0000-0000-000000000002'],
      [3, 'NVIDIA H100 80GB HBM3', { parentIndex: 0, profile: '1g.10gb' }, 9984, 'MIG-00000003-0000-0000-0000-000000000003'],
    ]);
    expect(hardwareBlock(inv, 'vllm')).toEqual({
      gpu_type: 'H100 80GB HBM3',
      gpu_model: 'NVIDIA H100 80GB HBM3',
      vram_gb: 39, // the first slice: 40448 MiB = 39.5 GiB, floored as Go does
      gpu_count: 4,
      compute_capability: '9.0',
      driver_version: '590.48.01',
      cuda_version: '13.1',
      serving_engine: 'vllm',
    });
  });

  it('"Failed to initialize NVML: Driver/library version mismatch" -> a clear note, then the generic scan', async () => {
    const b = bin();
    writeFakeNvidiaSmi(b, fixture('nvidia/rtx3080'));
    const log = memoryLog();
    const inv = await detectGpus({ env: b.env({ FAKE_SMI_MODE: 'mismatch' }), log: log.child('gpu') });
    // This machine has no GPU, so the systeminformation fallback finds none either.
    const baseline = await detectGpus({ env: bin().env() });
    expect(inv.gpus).toEqual(baseline.gpus);
    expect(inv.note).toMatch(/^No GPU found: nvidia-smi: Failed to initialize NVML: Driver\/library version mismatch NVML library version: 570\.124\./);
    expect(inv.note).toContain('reboot the machine');
    expect(hardwareBlock(inv, 'unknown')).toBeUndefined();
    expect(log.entries().some((e) => e.level === 'warn' && e.msg.includes('version mismatch'))).toBe(true);
  });

  it('a hung nvidia-smi: detection returns at the deadline, says so, and leaves no process behind', async () => {
    const b = bin();
    writeFakeNvidiaSmi(b, fixture('nvidia/rtx3080'));
    const t0 = Date.now();
    const inv = await detectGpus({ env: b.env({ FAKE_SMI_MODE: 'hang' }), timeoutMs: 400 });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(inv.gpus).toEqual([]);
    expect(inv.note).toMatch(/^No GPU found: nvidia-smi did not answer within 0\.4 s/);
    expect(inv.note).toContain('Skipped the generic GPU scan because a vendor tool hung.');
    expect(processesUsing(b.dir)).toEqual([]);
  });
});

describe('AMD via amd-smi / rocm-smi', () => {
  it('RX 7900 XTX via amd-smi static --json (gpu_data, value/unit shape)', async () => {
    const b = bin();
    writeFakeAmdSmi(b, fixture('amd/rx7900xtx'));
    const inv = await detectGpus({ env: b.env() });
    expect(inv.gpus).toEqual([
      {
        index: 0,
        vendor: 'amd',
        model: 'AMD Radeon RX 7900 XTX',
        slug: 'rx7900xtx',
        vramTotalMb: 24560,
        sharedMemory: false,
        driverVersion: '6.12.12',
        busId: '0000:63:00.0',
        source: 'amd-smi',
      },
    ]);
    expect(hardwareBlock(inv, 'llamacpp')).toEqual({
      gpu_type: 'Radeon RX 7900 XTX',
      gpu_model: 'AMD Radeon RX 7900 XTX',
      vram_gb: 23, // 24560 MiB floored
      gpu_count: 1,
      compute_capability: '',
      driver_version: '6.12.12',
      cuda_version: '',
      serving_engine: 'llamacpp',
    });
  });

  it('amd-smi failing (amdgpu not loaded) falls back to rocm-smi', async () => {
    const b = bin();
    writeFakeAmdSmi(b, fixture('amd/rx7900xtx'));
    writeFakeRocmSmi(b, fixture('amd/rx7900xt-rocm/rocm-smi.json'));
    const inv = await detectGpus({ env: b.env({ FAKE_AMDSMI_FAIL: '1' }) });
    expect(inv.gpus.map((g) => [g.model, g.slug, g.vramTotalMb, g.source])).toEqual([['Radeon RX 7900 XT', 'rx7900xt', 20464, 'rocm-smi']]);
    expect(hardwareBlock(inv, 'vllm')).toMatchObject({ gpu_count: 1, serving_engine: 'vllm' });
  });

  it('amd-smi failing with no rocm-smi: the driver problem is in the note', async () => {
    const b = bin();
    writeFakeAmdSmi(b, fixture('amd/rx7900xtx'));
    const inv = await detectGpus({ env: b.env({ FAKE_AMDSMI_FAIL: '1' }), useSystemInformation: false });
    expect(inv.gpus).toEqual([]);
    expect(inv.note).toContain('amd-smi: ERROR:root:Unable to get devices, driver not initialized');
    expect(inv.note).toContain('install ROCm');
  });
});

describe('systeminformation fallback (Apple Silicon, Intel, others)', () => {
  it('Apple M2 Max: unified memory reported honestly as shared memory', () => {
    const raw = JSON.parse(fs.readFileSync(fixture('si/apple-m2-max.json'), 'utf8')) as unknown;
    const { gpus } = mapSiControllers(raw, 98304);
    expect(gpus).toEqual([
      { index: 0, vendor: 'apple', model: 'Apple M2 Max', slug: 'm2max', vramTotalMb: 98304, sharedMemory: true, source: 'systeminformation' },
    ]);
    expect(hardwareBlock({ gpus, detectedAt: 0 }, 'ollama')).toEqual({
      gpu_type: 'm2_max', // Go's detectAppleSiliconHardware form
      gpu_model: 'Apple M2 Max',
      vram_gb: 96,
      gpu_count: 1,
      compute_capability: '',
      driver_version: '',
      cuda_version: '',
      serving_engine: 'ollama',
    });
  });

  it('MacBook Pro Intel + Radeon: the discrete card first, its misread VRAM not passed on as 4 MB', () => {
    const raw = JSON.parse(fs.readFileSync(fixture('si/macbook-pro-intel-amd.json'), 'utf8')) as unknown;
    const { gpus, remarks } = mapSiControllers(raw, 16384);
    expect(gpus.map((g) => [g.index, g.vendor, g.model, g.vramTotalMb, g.sharedMemory])).toEqual([
      [0, 'amd', 'Radeon Pro 560X', 0, false],
      [1, 'intel', 'Intel UHD Graphics 630', 1536, true],
    ]);
    expect(remarks.join(' ')).toContain('VRAM of "Radeon Pro 560X" could not be read reliably (reported 4 MB)');
  });

  it('virtual display adapters are not GPUs', () => {
    const { gpus, remarks } = mapSiControllers([{ vendor: 'VMware', model: 'SVGA II Adapter', vram: 16, vramDynamic: false }], 8192);
    expect(gpus).toEqual([]);
    expect(remarks[0]).toContain('virtual or management display adapter');
  });

  it('malformed controller data is ignored, not thrown', () => {
    expect(mapSiControllers({ not: 'a list' }, 1).gpus).toEqual([]);
    expect(mapSiControllers([42, { model: 7 }, null], 1).gpus).toEqual([]);
  });
});

// Skipped on a developer machine that has a GPU tool installed: the test is about a CPU-only host.
const hostHasGpuTool = ['nvidia-smi', 'amd-smi', 'rocm-smi'].some((t) => findOnPath(t, process.env));

describe('this machine (no GPU)', () => {
  it.skipIf(hostHasGpuTool)('detects no GPU, with a clear note, and registers with gpu_count 0', async () => {
    const log = memoryLog();
    const inv = await detectGpus({ log: log.child('gpu') });
    expect(inv.gpus).toEqual([]);
    expect(inv.note).toBe(
      'No GPU found: no NVIDIA (nvidia-smi), AMD (amd-smi, rocm-smi) or other GPU was detected. This machine registers with gpu_count 0 and can serve CPU engines only.',
    );
    expect(hardwareBlock(inv, 'unknown')).toBeUndefined(); // Go's nil *HardwareInfo: no block at all
    expect(log.entries().some((e) => e.msg.startsWith('No GPU found'))).toBe(true);
  });
});
