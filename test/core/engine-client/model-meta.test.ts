// What engines say about their models, read by discovery from the answers it already fetches: llama.cpp's
// /v1/models meta, Ollama's /api/tags details (real answers: the trace fixtures and the stand-in engines).
import { afterEach, describe, expect, it } from 'vitest';
import { detectEngine } from '../../../src/core/engine-client/detect';
import { modelMetaOf, parameterCount } from '../../../src/core/engine-client/model-meta';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

const engines: TestEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
});

describe('engine model metadata', () => {
  it('parameter sizes as engines write them', () => {
    expect(parameterCount('8.0B')).toBe(8e9);
    expect(parameterCount('494.03M')).toBeCloseTo(4.9403e8);
    expect(parameterCount(147392)).toBe(147392);
    for (const bad of ['', 'big', '7', -1, Number.NaN, null]) expect(parameterCount(bad)).toBeUndefined();
  });

  it('Ollama: family, parameter size and quantization from /api/tags, keyed by the tag discovery lists', async () => {
    const e = await startTestEngine({ engineType: 'ollama' });
    engines.push(e);
    const info = await detectEngine(e.url);
    expect(info?.modelMeta?.['gemma3:4b']).toEqual({ family: 'gemma3', parameters: 4.3e9, quantization: 'Q4_K_M' });
  });

  it("llama.cpp: the parameter count and file type from /v1/models meta; its Ollama-style list's empty details add nothing", async () => {
    const e = await startTestEngine({ engineType: 'llamacpp' });
    engines.push(e);
    const info = await detectEngine(e.url);
    const [name] = info!.models;
    expect(info?.modelMeta?.[name!]).toMatchObject({ parameters: expect.any(Number) });
    expect(info?.modelMeta?.[name!]?.family).toBeUndefined();
  });

  it('ignores what is not well formed, and engines that say nothing get no metadata', async () => {
    expect(
      modelMetaOf({
        models: { data: [{ id: 'x', meta: 'junk' }, 'junk', { id: 'y', meta: { n_params: 'many' } }] },
        tags: { models: [{ name: 'z', details: { family: 5 } }] },
      }),
    ).toEqual({});
    const e = await startTestEngine({ engineType: 'vllm' });
    engines.push(e);
    expect((await detectEngine(e.url))?.modelMeta).toBeUndefined();
  });
});
