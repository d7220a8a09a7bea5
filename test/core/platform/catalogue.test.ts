// Catalogue matching: the cases of the Go provider's internal/setup/setup_test.go (normalisation,
// Ollama and Hugging Face names to catalogue ids, slug fallback), validation of the answer, and the
// cache that keeps the last good list. The fetch runs against a real local HTTP server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { Catalogue, matchModel, matchView, modelInfo, normalizeModelName, parseCatalogue, type CatalogueModel } from '../../../src/core/platform/catalogue';
import fixture from '../../../src/cli/dev-hub-fixtures/models.json' with { type: 'json' };

describe('normalizeModelName', () => {
  it.each([
    ['llama3.2:3b', 'llama-3-2-3b'],
    ['qwen2.5:7b', 'qwen-2-5-7b'],
    ['phi3:mini', 'phi-3-mini'],
    ['mistral:7b', 'mistral-7b'],
    ['llama3.2:3b-instruct', 'llama-3-2-3b'],
    ['meta-llama/Llama-3.2-3B-Instruct', 'llama-3-2-3b'],
    ['Qwen/Qwen2.5-7B-Instruct', 'qwen-2-5-7b'],
    ['mistralai/Mistral-7B-Instruct-v0.1', 'mistral-7b-instruct-v-0-1'],
    ['llama-3.2-3b', 'llama-3-2-3b'],
    ['llama3:latest', 'llama-3'],
    ['LLAMA3.2:3B', 'llama-3-2-3b'],
  ])('%s -> %s', (raw, want) => expect(normalizeModelName(raw)).toBe(want));

  it('splits family, version and size', () => {
    expect(modelInfo('llama-3-2-3b')).toEqual({ family: 'llama', version: '3-2', size: '3b' });
    expect(modelInfo('mistral-7b')).toEqual({ family: 'mistral', version: '', size: '7b' });
    expect(modelInfo('phi-3-mini')).toEqual({ family: 'phi', version: '3', size: 'mini' });
    expect(modelInfo('deepseek-v-2-7b')).toEqual({ family: 'deepseek', version: '2', size: '7b' });
    expect(modelInfo('llama-3-70b')).toEqual({ family: 'llama', version: '3', size: '70b' });
  });
});

describe('matchModel', () => {
  const swan: CatalogueModel[] = [
    { id: 'llama-3.2-3b' },
    { id: 'llama-3.2-1b' },
    { id: 'qwen-2.5-7b' },
    { id: 'mistral-7b' },
    { id: 'phi-3-mini' },
    { id: 'deepseek-v2-7b' },
  ];
  it.each([
    ['llama3.2:3b', 'llama-3.2-3b'],
    ['qwen2.5:7b', 'qwen-2.5-7b'],
    ['mistral:7b', 'mistral-7b'],
    ['phi3:mini', 'phi-3-mini'],
    ['meta-llama/Llama-3.2-3B-Instruct', 'llama-3.2-3b'],
    ['Qwen/Qwen2.5-7B-Instruct', 'qwen-2.5-7b'],
    ['llama3.2:1b', 'llama-3.2-1b'],
  ])('the same name once normalised: %s -> %s', (local, id) => {
    expect(matchModel(local, swan)).toEqual({ id, confidence: 1, basis: 'name' });
  });

  it('matches Hugging Face ids case-insensitively with full confidence', () => {
    const hf: CatalogueModel[] = [{ id: 'meta-llama/Llama-3.1-8B-Instruct' }, { id: 'Qwen/Qwen2.5-7B-Instruct' }];
    for (const [local, id] of [
      ['meta-llama/llama-3.1-8b-instruct', 'meta-llama/Llama-3.1-8B-Instruct'],
      ['META-LLAMA/LLAMA-3.1-8B-INSTRUCT', 'meta-llama/Llama-3.1-8B-Instruct'],
      ['qwen/qwen2.5-7b-instruct', 'Qwen/Qwen2.5-7B-Instruct'],
    ]) {
      expect(matchModel(local!, hf)).toEqual({ id, confidence: 1, basis: 'id' });
    }
  });

  it('falls back to the slug, and to known aliases', () => {
    const cat: CatalogueModel[] = [
      { id: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506', slug: 'mistral-small-24b' },
      { id: 'deepseek-ai/DeepSeek-R1-0528', slug: 'deepseek-r1' },
      { id: 'black-forest-labs/FLUX.1-schnell', slug: 'flux-1-schnell' },
    ];
    expect(matchModel('mistral-small:24b', cat)).toMatchObject({ id: 'mistralai/Mistral-Small-3.2-24B-Instruct-2506', confidence: 1 });
    expect(matchModel('deepseek-r1', cat)).toMatchObject({ id: 'deepseek-ai/DeepSeek-R1-0528', confidence: 1 });
    expect(matchModel('flux-1-schnell', cat)).toMatchObject({ id: 'black-forest-labs/FLUX.1-schnell', confidence: 1 });
  });

  it('never on a likeness of names alone: "phi" is not "dolphin-phi", "small" is not Mistral Small or Llama 8B', () => {
    const cat: CatalogueModel[] = [{ id: 'phi-3-mini' }, { id: 'dolphin-phi-2' }];
    expect(matchModel('phi3:mini', cat)?.id).toBe('phi-3-mini');
    expect(matchModel('gemma2:9b', cat)).toBeUndefined();
    const { models } = parseCatalogue(fixture);
    expect(matchModel('small', models)).toBeUndefined();
    expect(matchModel('llama-3.1-8b-q4', models)).toBeUndefined(); // a file's name, and nothing reported
  });

  it("the engine's report decides: a file named like Llama 8B that holds 0.1 M parameters is not Llama 8B", () => {
    const { models } = parseCatalogue(fixture);
    // llama.cpp /v1/models meta of the random-weight test models (n_params, ftype).
    expect(matchModel('llama-3.1-8b', models, { parameters: 147_392, quantization: 'all F32' })).toBeUndefined();
    expect(matchModel('small', models, { parameters: 22_000_000, quantization: 'F16' })).toBeUndefined();
    // The same name with a report that fits is the alias' model.
    expect(matchModel('llama-3.1-8b', models, { family: 'llama', parameters: 8.03e9 })).toEqual({
      id: 'meta-llama/Llama-3.1-8B-Instruct',
      confidence: 1,
      basis: 'name',
    });
  });

  it('by metadata: family and parameter size (and version where the name has one) fitting one catalogue model', () => {
    const { models } = parseCatalogue(fixture);
    // An Ollama tag the normalised name does not reach, with /api/tags details.
    expect(matchModel('my-qwen:latest', models, { family: 'qwen2', parameters: 7.6e9, quantization: 'Q4_K_M' })).toEqual({
      id: 'Qwen/Qwen2.5-7B-Instruct',
      confidence: 0.75,
      basis: 'metadata',
    });
    expect(matchModel('llama3.1:latest', models, { family: 'llama', parameters: 8.0e9 })).toEqual({
      id: 'meta-llama/Llama-3.1-8B-Instruct',
      confidence: 0.9,
      basis: 'metadata',
    });
    expect(matchModel('llama3.2:latest', models, { family: 'llama', parameters: 8.0e9 })).toBeUndefined(); // 3.2 comes in 1B and 3B, not 8B
    // Same family, another size: no catalogue model fits.
    expect(matchModel('my-qwen:latest', models, { family: 'qwen2', parameters: 1.5e9 })).toBeUndefined();
    // Two fit (Llama 3.1 8B and 3.2 3B are different sizes; two 70B-class would be ambiguous): none is chosen.
    const two: CatalogueModel[] = [{ id: 'org/Foo-1-7B' }, { id: 'org/Foo-2-7B' }];
    expect(matchModel('foo-custom', two, { family: 'foo', parameters: 7e9 })).toBeUndefined();
    // A quantization the catalogue id names must agree with the engine's.
    expect(matchModel('qwen-custom', [{ id: 'Qwen/Qwen2.5-7B-Instruct-AWQ' }], { family: 'qwen2', parameters: 7.6e9, quantization: 'F16' })).toBeUndefined();
    expect(matchModel('qwen-custom', [{ id: 'Qwen/Qwen2.5-7B-Instruct-AWQ' }], { family: 'qwen2', parameters: 7.6e9, quantization: 'Q4_K_M' })?.id).toBe(
      'Qwen/Qwen2.5-7B-Instruct-AWQ',
    );
  });
});

describe('the console view', () => {
  const { models } = parseCatalogue(fixture);
  it('a known id is known; an engine name gets its matched id; suggestions come only from a match or the report', () => {
    expect(matchView('meta-llama/Llama-3.1-8B-Instruct', 'explicit', undefined, models)).toEqual({ known: true, source: 'explicit', suggestions: [] });
    const v = matchView('qwen2.5:7b', 'engine', undefined, models);
    expect(v).toMatchObject({ known: false, source: 'engine', matchedId: 'Qwen/Qwen2.5-7B-Instruct', basis: 'name' });
    expect(v.suggestions).toEqual(['Qwen/Qwen2.5-7B-Instruct']);
    // A case difference is not the same id on the wire.
    expect(matchView('qwen/qwen2.5-7b-instruct', 'explicit', undefined, models)).toMatchObject({ known: false, matchedId: 'Qwen/Qwen2.5-7B-Instruct' });
    // Nothing known of it: no match and no suggestion (before, a likeness of letters offered Llama 8B for "small").
    expect(matchView('small', 'engine', '/srv/models/small.gguf', models, { parameters: 22_000_000, quantization: 'F16' })).toEqual({
      known: false,
      source: 'engine',
      suggestions: [],
    });
    expect(matchView('totally-unrelated-thing', 'engine', undefined, models)).toEqual({ known: false, source: 'engine', suggestions: [] });
  });
});

describe('parseCatalogue', () => {
  it('reads data.list, skips malformed entries and leaves out inactive ones', () => {
    const r = parseCatalogue({ data: { list: [{ id: 'a', active: true }, { id: 'b', active: false }, { name: 'no id' }, 'junk', { id: 'c', slug: 5 }] } });
    expect(r.models.map((m) => m.id)).toEqual(['a', 'c']);
    expect(r.skipped).toBe(2);
    expect(parseCatalogue(fixture).models.some((m) => m.id.startsWith('mistralai/'))).toBe(false);
  });
  it('refuses an answer without data.list', () => {
    expect(() => parseCatalogue({ data: [] })).toThrow(expect.objectContaining({ code: 'no_model_list', field: 'data.list' }));
    expect(() => parseCatalogue(null)).toThrow();
  });
});

describe('Catalogue (fetch and cache)', () => {
  let server: http.Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  it('asks /api/v1/models?page_size=200, and a failed refresh keeps the last good list', async () => {
    let mode: 'ok' | 'broken' | 'down' = 'ok';
    const paths: string[] = [];
    server = http.createServer((req, res) => {
      paths.push(req.url ?? '');
      if (mode === 'down') return res.writeHead(503).end('maintenance');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(mode === 'ok' ? JSON.stringify(fixture) : '{"data": {"list": ');
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const log = memoryLog();
    const cat = new Catalogue({ serviceUrl: () => url, log: log.child('catalogue') });
    expect(cat.view([{ id: 'x', explicit: true }])).toMatchObject({ state: 'idle', models: {} });
    await cat.refresh();
    expect(paths).toEqual(['/api/v1/models?page_size=200']);
    const size = cat.models.length;
    expect(size).toBeGreaterThan(3);
    await cat.refresh(); // fresh: no second fetch
    expect(paths).toHaveLength(1);
    for (const m of ['broken', 'down'] as const) {
      mode = m;
      await cat.refresh(true);
      expect(cat.models).toHaveLength(size);
      const v = cat.view([{ id: 'simulated-llama-3.1-8b-instruct', explicit: true }]);
      expect(v.state).toBe('error');
      expect(v.models['simulated-llama-3.1-8b-instruct']?.known).toBe(true);
    }
    expect(log.entries(10, 'warn').some((e) => /could not read the model catalogue/.test(e.msg))).toBe(true);
    mode = 'ok';
    await cat.refresh(true);
    expect(cat.view([]).state).toBe('ok');
  });

  it('gives up after its timeout', async () => {
    server = http.createServer(() => {
      /* never answers */
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const cat = new Catalogue({ serviceUrl: () => `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, log: memoryLog().child('c'), timeoutMs: 200 });
    await cat.refresh();
    expect(cat.view([]).error).toMatch(/no answer within 0.2 s/);
  });
});
