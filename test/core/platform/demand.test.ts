// Demand beside this machine, and "serve this" through an Ollama stand-in that follows Ollama's API
// docs (POST /api/pull, NDJSON progress): progress summed over layers, success, Ollama's own error,
// and no pull into a URL that is not one of this machine's Ollama engines.
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EarningsService } from '../../../src/core/agent/earnings';
import type { PullState } from '../../../src/core/agent/ollama-pull';
import { memoryLog } from '../../../src/core/log';
import { demandRows } from '../../../src/core/platform/demand';
import { OllamaStandIn } from '../../support/ollama-standin';
import { PlatformApi } from '../../support/platform-api';
import { tempHome, until } from '../../support/stack';

let ollama: OllamaStandIn;
let api: PlatformApi;
let pulled = 0;
let svc: EarningsService;
let home: string;
beforeEach(async () => {
  home = tempHome('swan-demand-');
  ollama = await OllamaStandIn.start();
  api = await PlatformApi.start('k');
  pulled = 0;
  svc = new EarningsService({
    home,
    log: memoryLog().child('e'),
    serviceUrl: () => api.url,
    providerKey: () => 'k',
    models: () => ['legacy/model'],
    machine: () => ({ known: ['legacy/model'], ollamaEngines: [ollama.url], vramGb: 24 }),
    onPulled: () => pulled++,
  });
});
afterEach(async () => {
  fs.rmSync(home, { recursive: true, force: true });
  await ollama.close();
  await api.close();
});

function pullOf(model: string): PullState | undefined {
  return svc.pulls.list().find((p) => p.model === model);
}

describe('demand', () => {
  it('lists what the network pays, best paid first, beside what this machine serves', async () => {
    const d = await svc.demand();
    expect(d.rows.map((r) => [r.modelId, r.outputPerM, r.here])).toEqual([
      ['openai/gpt-5.4', 10.8, 'pullable'],
      ['legacy/model', 1.5, 'serving'],
    ]);
    expect(d.vramGb).toBe(24);
    expect(
      demandRows({ rates: d.rates.asOf ? [{ modelId: 'm', inputPerM: 1, outputPerM: 1, listInputPerM: 1, listOutputPerM: 1, tier: '' }] : [], announced: [], known: ['m'], ollama: false, vramGb: 8, sizeGb: () => 7.5 }),
    ).toEqual([{ modelId: 'm', inputPerM: 1, outputPerM: 1, tier: '', here: 'on_disk', sizeGb: 7.5, fits: 'no' }]);
  });

  it('"serve this" pulls into the Ollama engine with progress, then rescans', async () => {
    await svc.pull(ollama.url, 'qwen2.5:0.5b');
    expect(ollama.requests[0]).toEqual({ path: '/api/pull', body: { model: 'qwen2.5:0.5b', stream: true } });
    await until(() => pullOf('qwen2.5:0.5b')?.done === true, 'pull finished');
    expect(pullOf('qwen2.5:0.5b')).toMatchObject({ status: 'success', completed: 397_807_936 + 6_924 + 11_343, total: 397_807_936 + 6_924 + 11_343 });
    expect(pullOf('qwen2.5:0.5b')?.error).toBeUndefined();
    expect(pulled).toBe(1);
  });

  it("Ollama's error is shown as is; a URL that is not an Ollama engine here is refused; a bad name is refused", async () => {
    await svc.pull(ollama.url, 'no-such-model:1b');
    await until(() => pullOf('no-such-model:1b')?.done === true, 'pull finished');
    expect(pullOf('no-such-model:1b')).toMatchObject({ error: 'pull model manifest: file does not exist' });
    expect(pulled).toBe(0);
    await expect(svc.pull('http://169.254.169.254', 'qwen2.5:0.5b')).rejects.toThrow(/not an Ollama engine found on this machine/);
    await expect(svc.pull(ollama.url, 'x; rm -rf /')).rejects.toThrow(/not an Ollama model name/);
  });
});
