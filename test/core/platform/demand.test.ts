// Demand beside this machine, and "serve this" through an Ollama stand-in that follows Ollama's API
// docs (POST /api/pull, NDJSON progress): progress summed over layers, success, Ollama's own error,
// and no pull into a URL that is not one of this machine's Ollama engines. A pull for a network model,
// or a network model already on disk under an Ollama tag, is mapped in models.json (network id → tag).
// The fit uses real sizes only: model-demand's min_vram_gb, else the size Ollama reports on disk.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EarningsService } from '../../../src/core/accounting/earnings';
import type { PullState } from '../../../src/core/downloads/ollama-pull';
import { memoryLog } from '../../../src/core/base/log';
import { ModelRegistry } from '../../../src/core/models/registry';
import { InferenceRunner } from '../../../src/core/inference/runner';
import { RequestBook } from '../../../src/core/inference/requests';
import { parseOllamaTags } from '../../../src/core/engine-client/ollama-tags';
import { demandRows } from '../../../src/core/platform/demand';
import { parseModelDemand, type NetworkRate } from '../../../src/core/platform/rates';
import { OllamaStandIn } from '../../support/ollama-standin';
import { PlatformApi } from '../../support/platform-api';
import { tempHome, until } from '../../support/stack';

let ollama: OllamaStandIn;
let api: PlatformApi;
let pulled = 0;
let mapped: string[] = [];
let svc: EarningsService;
let home: string;
let modelsFile: string;
beforeEach(async () => {
  home = tempHome('swan-demand-');
  ollama = await OllamaStandIn.start();
  api = await PlatformApi.start('k');
  pulled = 0;
  mapped = [];
  modelsFile = path.join(home, 'models.json');
  svc = new EarningsService({
    home,
    log: memoryLog().child('e'),
    serviceUrl: () => api.url,
    providerKey: () => 'k',
    models: () => ['legacy/model'],
    machine: () => ({ known: ['legacy/model'], ollamaEngines: [ollama.url], vramGb: 24 }),
    onPulled: () => pulled++,
    modelsFile,
    onMapped: (id) => mapped.push(id),
    // The pull goes through the engine-call service, as in the agent.
    openPull: (target, p, body, signal) => {
      const runner = new InferenceRunner({
        registry: new ModelRegistry(),
        admit: () => Promise.reject(new Error('not here')),
        book: new RequestBook(),
        log: memoryLog().child('r'),
      });
      return runner.open({ purpose: 'ollama-pull', target, path: p, body, signal, timeoutMs: 10_000 });
    },
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
    // Neither the network nor an engine here gives a size for these: the fit stays unknown.
    expect(d.rows.map((r) => [r.minVramGb, r.sizeGb, r.fits])).toEqual([
      [null, null, 'unknown'],
      [null, null, 'unknown'],
    ]);
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
    await expect(svc.pull('http://169.254.169.254', 'qwen2.5:0.5b')).rejects.toMatchObject({ code: 'not_local_engine', field: 'engineUrl' });
    await expect(svc.pull(ollama.url, 'x; rm -rf /')).rejects.toMatchObject({ code: 'not_model_name', field: 'model' });
  });
});

/** model-demand entries shaped as the Go provider's modelDemandAPIEntry (cmd/computing-provider/inference.go). */
const DEMAND_WITH_VRAM = {
  code: 0,
  msg: 'success',
  data: {
    models: [
      {
        model_id: 'Qwen/Qwen2.5-72B-Instruct',
        model_name: 'Qwen2.5 72B Instruct',
        category: 'text-generation',
        input_price: 0.4,
        output_price: 1.2,
        online_providers: 3,
        requests_24h: 9120,
        min_vram_gb: 48,
      },
      {
        model_id: 'Qwen/Qwen2.5-7B-Instruct',
        model_name: 'Qwen2.5 7B Instruct',
        category: 'text-generation',
        input_price: 0.1,
        output_price: 0.3,
        online_providers: 9,
        requests_24h: 20411,
        min_vram_gb: 0,
      },
      { model_id: 'meta-llama/Llama-3.1-8B-Instruct', input_price: 0.1, output_price: 0.25, min_vram_gb: 16 },
      { model_id: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506', input_price: 0.2, output_price: 0.6, min_vram_gb: '24' },
    ],
  },
};

/** /api/tags as Ollama's docs ("List Local Models") show it, for what an owner typically has on disk. */
const TAGS = {
  models: [
    {
      name: 'qwen2.5:7b',
      model: 'qwen2.5:7b',
      modified_at: '2026-11-20T10:01:57.123456789Z',
      size: 4683087332,
      digest: '845dbda0ea48ed749caafd9e6037047aa19acfcfd82e704d7ca97d631a0b697e',
      details: { parent_model: '', format: 'gguf', family: 'qwen2', families: ['qwen2'], parameter_size: '7.6B', quantization_level: 'Q4_K_M' },
    },
    {
      name: 'qwen2.5:3b',
      model: 'qwen2.5:3b',
      modified_at: '2026-11-20T10:05:12.123456789Z',
      size: 1929912432,
      digest: '357c53fb659c5076de1d65ccb0b397446227b71a42be9d1603d46168015c9e4b',
      details: { parent_model: '', format: 'gguf', family: 'qwen2', families: ['qwen2'], parameter_size: '3.1B', quantization_level: 'Q4_K_M' },
    },
    { name: 'broken', size: 'big' },
    { model: 'no-name' },
  ],
};

describe('fit from real sizes', () => {
  function rates(): NetworkRate[] {
    const r = parseModelDemand(DEMAND_WITH_VRAM);
    if (!r.ok) throw new Error(r.error);
    return r.value;
  }

  it("model-demand's min_vram_gb is kept when it is a GB count; 0 or a string means not given (the rates still stand)", () => {
    expect(rates().map((r) => [r.modelId, r.minVramGb])).toEqual([
      ['Qwen/Qwen2.5-72B-Instruct', 48],
      ['Qwen/Qwen2.5-7B-Instruct', undefined],
      ['meta-llama/Llama-3.1-8B-Instruct', 16],
      ['mistralai/Mistral-Small-3.2-24B-Instruct-2506', undefined],
    ]);
  });

  it("/api/tags entries: size in bytes and Ollama's details; malformed entries are skipped, an answer without models refused", () => {
    expect(parseOllamaTags(TAGS)).toEqual([
      { name: 'qwen2.5:7b', sizeBytes: 4683087332, parameterSize: '7.6B', quantization: 'Q4_K_M' },
      { name: 'qwen2.5:3b', sizeBytes: 1929912432, parameterSize: '3.1B', quantization: 'Q4_K_M' },
      { name: 'broken' },
    ]);
    expect(() => parseOllamaTags({ data: [] })).toThrow(expect.objectContaining({ code: 'no_model_list', field: 'models' }));
  });

  it('fits from min_vram_gb where the network gives it, else from the size on disk; a tag of another size is not the model', () => {
    const onDisk = parseOllamaTags(TAGS).map((model) => ({ engineUrl: 'http://127.0.0.1:11434', model }));
    const rows = demandRows({ rates: rates(), announced: [], known: [], ollama: true, vramGb: 24, onDisk });
    const by = new Map(rows.map((r) => [r.modelId, r]));
    // 48 GB needed, 24 here.
    expect(by.get('Qwen/Qwen2.5-72B-Instruct')).toMatchObject({ here: 'pullable', minVramGb: 48, sizeGb: null, fits: 'no' });
    // 4,683,087,332 B / 2^30 = 4.36 GiB on disk; × 1.2 = 5.2 ≤ 24. qwen2.5:7b is this model (the 3b tag is not).
    expect(by.get('Qwen/Qwen2.5-7B-Instruct')).toEqual({
      modelId: 'Qwen/Qwen2.5-7B-Instruct',
      inputPerM: 0.1,
      outputPerM: 0.3,
      tier: '',
      here: 'on_disk',
      local: { engineUrl: 'http://127.0.0.1:11434', model: 'qwen2.5:7b' },
      minVramGb: null,
      sizeGb: 4.36,
      parameterSize: '7.6B',
      quantization: 'Q4_K_M',
      fits: 'yes',
    });
    expect(by.get('meta-llama/Llama-3.1-8B-Instruct')).toMatchObject({ minVramGb: 16, sizeGb: null, fits: 'yes' });
    expect(by.get('mistralai/Mistral-Small-3.2-24B-Instruct-2506')).toMatchObject({ minVramGb: null, sizeGb: null, fits: 'unknown' });
    // 4.36 × 1.2 = 5.2 > 4: too big for a 4 GB card; no GPU: unknown.
    expect(demandRows({ rates: rates(), announced: [], known: [], ollama: true, vramGb: 4, onDisk }).find((r) => r.sizeGb !== null)?.fits).toBe('no');
    expect(demandRows({ rates: rates(), announced: [], known: [], ollama: true, vramGb: null, onDisk }).every((r) => r.fits === 'unknown')).toBe(true);
  });
});

describe('"serve this" announces the network id', () => {
  const QWEN = 'Qwen/Qwen2.5-0.5B-Instruct';
  beforeEach(() => {
    api.routes['/api/v1/stats/model-demand'] = {
      kind: 'json',
      body: { code: 0, data: { models: [{ model_id: QWEN, input_price: 0.05, output_price: 0.1 }] } },
    };
  });

  it('a network model on disk under an Ollama tag: shown with the tag and its size, mapped in models.json on "serve this"', async () => {
    ollama.pulled.push('qwen2.5:0.5b');
    fs.writeFileSync(modelsFile, JSON.stringify({ 'my-own': { endpoint: 'http://127.0.0.1:8000/v1', max_concurrent: 2 } }));
    const d = await svc.demand();
    // 397,821,319 B / 2^30 = 0.37 GiB.
    expect(d.rows[0]).toMatchObject({
      modelId: QWEN,
      here: 'on_disk',
      local: { engineUrl: ollama.url, model: 'qwen2.5:0.5b' },
      sizeGb: 0.37,
      parameterSize: '494.03M',
      fits: 'yes',
    });
    await svc.serve(QWEN);
    expect(JSON.parse(fs.readFileSync(modelsFile, 'utf8'))).toEqual({
      'my-own': { endpoint: 'http://127.0.0.1:8000/v1', max_concurrent: 2 },
      [QWEN]: { endpoint: ollama.url, local_model: 'qwen2.5:0.5b' },
    });
    expect(fs.statSync(modelsFile).mode & 0o777).toBe(0o600);
    expect(mapped).toEqual([QWEN]);
    // Again: nothing to change. A model with no tag on disk: refused.
    await svc.serve(QWEN);
    expect(mapped).toEqual([QWEN, QWEN]);
    await expect(svc.serve('openai/gpt-5.4')).rejects.toMatchObject({ code: 'not_on_disk', field: 'modelId' });
  });

  it("the owner's own entry for that id is never overwritten", async () => {
    ollama.pulled.push('qwen2.5:0.5b');
    fs.writeFileSync(modelsFile, JSON.stringify({ [QWEN]: { endpoint: 'http://127.0.0.1:8000', local_model: 'qwen-hf' } }));
    await expect(svc.serve(QWEN)).rejects.toMatchObject({ code: 'already_mapped' });
    expect(JSON.parse(fs.readFileSync(modelsFile, 'utf8'))).toEqual({ [QWEN]: { endpoint: 'http://127.0.0.1:8000', local_model: 'qwen-hf' } });
    expect(mapped).toEqual([]);
  });

  it('a pull for a network model maps it once Ollama says success; an id the network does not list is refused', async () => {
    await svc.demand();
    await svc.pull(ollama.url, 'qwen2.5:0.5b', QWEN);
    await until(() => pullOf('qwen2.5:0.5b')?.done === true, 'pull finished');
    expect(pullOf('qwen2.5:0.5b')).toMatchObject({ status: 'success', networkId: QWEN });
    expect(pullOf('qwen2.5:0.5b')?.error).toBeUndefined();
    expect(JSON.parse(fs.readFileSync(modelsFile, 'utf8'))).toEqual({ [QWEN]: { endpoint: ollama.url, local_model: 'qwen2.5:0.5b' } });
    expect(mapped).toEqual([QWEN]);
    expect(pulled).toBe(1);
    await expect(svc.pull(ollama.url, 'qwen2.5:0.5b', 'not/listed')).rejects.toMatchObject({ code: 'not_network_model', field: 'networkId' });
  });

  it('a tag typed by hand that is not certainly the network model is pulled but not announced as it, and the pull says why', async () => {
    // The registry has a 1.5B Qwen; the owner typed it on the row of the 0.5B network model.
    ollama.registry['qwen2.5:1.5b'] = [986_048_768, 6_924];
    await svc.demand();
    const reply = await svc.pull(ollama.url, 'qwen2.5:1.5b', QWEN);
    // The reply already says it, before the pull ends.
    expect(reply.pulls.find((p) => p.model === 'qwen2.5:1.5b')?.notAnnounced?.code).toBe('tag_not_network_model');
    await until(() => pullOf('qwen2.5:1.5b')?.done === true, 'pull finished');
    expect(pullOf('qwen2.5:1.5b')).toMatchObject({ status: 'success', networkId: QWEN, notAnnounced: { code: 'tag_not_network_model' } });
    expect(pullOf('qwen2.5:1.5b')?.error).toBeUndefined();
    expect(pullOf('qwen2.5:1.5b')?.notAnnounced?.text).toContain(QWEN);
    expect(ollama.pulled).toEqual(['qwen2.5:1.5b']);
    expect(pulled).toBe(1);
    expect(fs.existsSync(modelsFile)).toBe(false);
    expect(mapped).toEqual([]);
    // The demand row does not take the tag as that model either: still pullable, no local name.
    const row = (await svc.demand()).rows.find((r) => r.modelId === QWEN);
    expect(row).toMatchObject({ here: 'pullable' });
    expect(row?.local).toBeUndefined();
    // The same model's own tag, typed by hand, is certain: announced.
    await svc.pull(ollama.url, 'qwen2.5:0.5b', QWEN);
    expect(pullOf('qwen2.5:0.5b')?.notAnnounced).toBeUndefined();
    await until(() => pullOf('qwen2.5:0.5b')?.done === true, 'second pull finished');
    expect(JSON.parse(fs.readFileSync(modelsFile, 'utf8'))).toEqual({ [QWEN]: { endpoint: ollama.url, local_model: 'qwen2.5:0.5b' } });
    expect(mapped).toEqual([QWEN]);
  });

  it("a pull whose mapping models.json refuses (the owner's own entry) says so with its code", async () => {
    fs.writeFileSync(modelsFile, JSON.stringify({ [QWEN]: { endpoint: 'http://127.0.0.1:8000', local_model: 'qwen-hf' } }));
    await svc.demand();
    await svc.pull(ollama.url, 'qwen2.5:0.5b', QWEN);
    await until(() => pullOf('qwen2.5:0.5b')?.done === true, 'pull finished');
    expect(pullOf('qwen2.5:0.5b')?.notAnnounced?.code).toBe('mapping_refused');
    expect(JSON.parse(fs.readFileSync(modelsFile, 'utf8'))).toEqual({ [QWEN]: { endpoint: 'http://127.0.0.1:8000', local_model: 'qwen-hf' } });
    expect(mapped).toEqual([]);
  });
});
