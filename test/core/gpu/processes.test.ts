// listGpuProcesses: who uses the GPU, and which of them are our engines.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { GpuToolError, isEngineProcess, listGpuProcesses } from '../../../src/core/gpu/processes';
import { fixture, makeFakeBin, writeFakeNvidiaSmi, type FakeBin } from '../../support/gpu/fake-tools';
import fs from 'node:fs';
import path from 'node:path';

const bins: FakeBin[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  while (bins.length) bins.pop()?.cleanup();
});

function fakeWith(fixtureDir: string): FakeBin {
  const b = makeFakeBin();
  bins.push(b);
  writeFakeNvidiaSmi(b, fixture(fixtureDir));
  return b;
}

describe('listGpuProcesses', () => {
  it('RTX 3080 running llama-server: the engine is recognised by name', async () => {
    const b = fakeWith('nvidia/rtx3080');
    expect(await listGpuProcesses({ env: b.env() })).toEqual([
      { pid: 3580441, name: './build/bin/llama-server', gpuUuid: 'GPU-00000000-0000-0000-0000-000000000000', usedMemoryMb: 4782, isEngine: true },
    ]);
  });

  it("the owner's other apps are not engines (kwin, ffmpeg, gpu_burn)", async () => {
    const two = await listGpuProcesses({ env: fakeWith('nvidia/two-gpu').env() });
    expect(two.map((p) => [p.pid, p.name, p.usedMemoryMb, p.isEngine])).toEqual([
      [2165, '/usr/bin/kwin_wayland', 25, false],
      [5022, 'ffmpeg', 503, false],
      [5021, 'ffmpeg', 360, false],
      [5268, 'ffmpeg', 370, false],
      [5267, 'ffmpeg', 230, false],
    ]);
    const h100 = await listGpuProcesses({ env: fakeWith('nvidia/h100-mig').env() });
    expect(h100.map((p) => [p.name, p.isEngine])).toEqual([
      ['/root/tools/memhog', false],
      ['/root/tools/memhog', false],
      ['./gpu_burn', false],
    ]);
  });

  it('a pid the agent knows as its engine wins over the name', async () => {
    const procs = await listGpuProcesses({ env: fakeWith('nvidia/h100-mig').env(), enginePids: [21198] });
    expect(procs.map((p) => [p.pid, p.isEngine])).toEqual([
      [21180, false],
      [21181, false],
      [21198, true],
    ]);
  });

  it('a Python process is an engine when its command line runs vLLM (read from /proc)', async () => {
    // A real process whose argv names vllm, as `python -m vllm.entrypoints.openai.api_server` does.
    const py = spawn('/usr/bin/python3', ['-c', 'import sys, time; time.sleep(30)', '-m', 'vllm.entrypoints.openai.api_server'], { stdio: 'ignore' });
    children.push(py);
    await new Promise<void>((resolve, reject) => {
      py.once('spawn', () => resolve());
      py.once('error', reject);
    });
    const b = makeFakeBin();
    bins.push(b);
    const dir = path.join(b.dir, 'fx');
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'compute-apps.csv'),
      `${py.pid}, python3, GPU-00000000-0000-0000-0000-000000000000, 20480\n1, python3, GPU-00000000-0000-0000-0000-000000000000, 100\n`,
    );
    writeFakeNvidiaSmi(b, dir);
    const procs = await listGpuProcesses({ env: b.env() });
    expect(procs.map((p) => [p.pid, p.isEngine])).toEqual([
      [py.pid, true],
      [1, false],
    ]);
  });

  it('names: retitled vLLM/SGLang workers, Ollama, LM Studio, TGI, Windows paths', () => {
    for (const n of [
      'VLLM::EngineCore',
      'VLLM::Worker_TP0',
      'sglang::scheduler',
      'ollama',
      'C:\\Users\\me\\AppData\\Local\\Programs\\Ollama\\ollama.exe',
      'llama-server',
      'lms',
      'text-generation-launcher',
    ]) {
      expect(isEngineProcess(n, 999_999_999), n).toBe(true);
    }
    for (const n of ['C:\\Windows\\explorer.exe', 'C:\\Program Files\\NZXT CAM\\NZXT CAM.exe', 'steam', 'python3', 'Cyberpunk2077.exe']) {
      expect(isEngineProcess(n, 999_999_999), n).toBe(false);
    }
  });

  it('no nvidia-smi: nothing to report', async () => {
    const b = makeFakeBin();
    bins.push(b);
    expect(await listGpuProcesses({ env: b.env() })).toEqual([]);
  });

  it('a failing nvidia-smi throws (no processes must not be confused with could not look)', async () => {
    const b = fakeWith('nvidia/rtx3080');
    await expect(listGpuProcesses({ env: b.env({ FAKE_SMI_MODE: 'mismatch' }) })).rejects.toThrow(GpuToolError);
    await expect(listGpuProcesses({ env: b.env({ FAKE_SMI_MODE: 'hang' }), timeoutMs: 300 })).rejects.toMatchObject({ code: 'timeout' });
  });
});
