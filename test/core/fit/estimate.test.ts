// The VRAM estimate and the three-state fit: GGUF headers read exactly (the shared test GGUFs), figures
// derived from what publishers write (config.json, a safetensors index, the Hub's dtype counts, Ollama's
// /api/show), and unknown never counted as fits.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_OVERHEAD_BYTES, estimateVram, fitOf, GIB, kvCacheBytes, MIB } from '../../../src/core/fit/estimate';
import { readGgufFacts } from '../../../src/core/fit/gguf-facts';
import {
  factsFromOllamaShow,
  quantBytesPerParameter,
  shapeFromConfig,
  weightsFromConfig,
  weightsFromDtypeCounts,
  weightsFromSafetensorsIndex,
} from '../../../src/core/fit/published';
import { repoRoot } from '../../support/traces';

const MODELS = path.resolve(repoRoot, '..', 'shared', 'engines', 'llama.cpp', 'models');
const HAVE_GGUF = fs.existsSync(path.join(MODELS, 'small.gguf'));

// Meta-Llama-3.1-8B-Instruct's config.json (the fields that size it), as published.
const LLAMA_8B_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  hidden_size: 4096,
  intermediate_size: 14336,
  max_position_embeddings: 131072,
  num_attention_heads: 32,
  num_hidden_layers: 32,
  num_key_value_heads: 8,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  vocab_size: 128256,
};

describe('KV cache', () => {
  it('is layers × slots × context × KV heads × (key + value width) × bytes per element', () => {
    // Llama 3.1 8B at 8192 tokens, one slot, f16: 32 × 8192 × 8 × 256 × 2 = 1 GiB.
    expect(kvCacheBytes({ layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128 }, { contextLength: 8192, slots: 1 })).toBe(GIB);
    expect(kvCacheBytes({ layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128 }, { contextLength: 8192, slots: 4 })).toBe(4 * GIB);
    expect(kvCacheBytes({ layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128 }, { contextLength: 8192, slots: 1, kvBytesPerElement: 1 })).toBe(GIB / 2);
  });
});

describe.skipIf(!HAVE_GGUF)(HAVE_GGUF ? 'GGUF headers' : 'GGUF headers — skipped: ../shared/engines/llama.cpp/models is absent', () => {
  it('read the weights exactly from the tensor table, and the KV shape from the architecture keys', async () => {
    const small = await readGgufFacts(path.join(MODELS, 'small.gguf'));
    expect(small.architecture).toBe('llama');
    expect(small.weights.exact).toBe(true);
    expect(small.weights.source).toBe('gguf');
    // llama-server reports "model buffer size = 21.39 MiB" for this file.
    expect(small.weights.bytes / MIB).toBeCloseTo(21.39, 2);
    expect(small.weights.parameters).toBe(11_012_736);
    expect(small.shape).toEqual({ layers: 6, kvHeads: 6, headDimK: 64, headDimV: 64, contextTrain: 512 });
    const tiny = await readGgufFacts(path.join(MODELS, 'tiny.gguf'));
    expect(tiny.weights.bytes / MIB).toBeCloseTo(0.56, 2);
  });

  it('give the KV buffer llama-server allocates for -c 1024 -np 2 (512 a slot)', async () => {
    const small = await readGgufFacts(path.join(MODELS, 'small.gguf'));
    const e = estimateVram(small.weights, small.shape, { contextLength: 512, slots: 2, overheadBytes: 0 });
    expect(e.known).toBe(true);
    if (!e.known) return;
    expect(e.kvBytes).toBe(9 * MIB); // llama-server: "CPU KV buffer size = 9.00 MiB"
    expect(e.weightsBytes).toBe(small.weights.bytes); // exact: no padding
  });

  it('refuse a file that is not a GGUF', async () => {
    await expect(readGgufFacts(path.join(repoRoot, 'package.json'))).rejects.toThrow();
  });
});

describe('the estimate', () => {
  it("pads a derived weights figure and adds the overhead; caps the context at the model's own", () => {
    const e = estimateVram(
      { bytes: 10 * GIB, source: 'config', exact: false },
      { layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128, contextTrain: 4096 },
      { contextLength: 8192, slots: 1 },
    );
    expect(e.known).toBe(true);
    if (!e.known) return;
    expect(e.weightsBytes).toBe(11 * GIB);
    expect(e.contextLength).toBe(4096);
    expect(e.kvBytes).toBe(GIB / 2);
    expect(e.overheadBytes).toBe(DEFAULT_OVERHEAD_BYTES);
    expect(e.totalBytes).toBe(11 * GIB + GIB / 2 + DEFAULT_OVERHEAD_BYTES);
  });

  it('is unknown, with a code, when the weights or the KV shape are not known', () => {
    expect(estimateVram(undefined, { layers: 1, kvHeads: 1, headDimK: 1, headDimV: 1 }, { contextLength: 1, slots: 1 })).toMatchObject({
      known: false,
      code: 'no_weights_figure',
    });
    expect(estimateVram({ bytes: GIB, source: 'config', exact: false }, undefined, { contextLength: 1, slots: 1 })).toMatchObject({
      known: false,
      code: 'no_kv_shape',
    });
    expect(
      estimateVram({ bytes: GIB, source: 'config', exact: false }, { layers: 0, kvHeads: 8, headDimK: 128, headDimV: 128 }, { contextLength: 1, slots: 1 }),
    ).toMatchObject({ known: false, code: 'no_kv_shape' });
  });
});

describe('the fit', () => {
  const known = estimateVram(
    { bytes: 4 * GIB, source: 'gguf', exact: true },
    { layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128 },
    { contextLength: 8192, slots: 1 },
  );
  const unknown = estimateVram(undefined, undefined, { contextLength: 8192, slots: 1 });

  it('is fits or too_large against the GPU memory', () => {
    expect(fitOf(known, 24 * GIB).fit).toBe('fits');
    expect(fitOf(known, 6 * GIB).fit).toBe('fits'); // 4 + 1 + 1 GiB: exactly full still fits
    expect(fitOf(known, 5.9 * GIB).fit).toBe('too_large');
  });

  it('is unknown without a GPU figure, even for a model that would fit anything', () => {
    expect(fitOf(known, undefined)).toMatchObject({ fit: 'unknown', code: 'no_gpu_memory' });
    expect(fitOf(known, 0)).toMatchObject({ fit: 'unknown', code: 'no_gpu_memory' });
  });

  it("takes the network's min_vram_gb only when it says the figure is known; otherwise stays unknown with the reason", () => {
    expect(fitOf(unknown, 24 * GIB, { minVramGb: 16, vramKnown: true })).toMatchObject({ fit: 'fits', basis: 'network' });
    expect(fitOf(unknown, 24 * GIB, { minVramGb: 80, vramKnown: true })).toMatchObject({ fit: 'too_large', basis: 'network' });
    expect(fitOf(unknown, 24 * GIB, { minVramGb: 16, vramKnown: false })).toMatchObject({ fit: 'unknown', code: 'no_weights_figure' });
    expect(fitOf(unknown, 24 * GIB, { minVramGb: 0, vramKnown: true }).fit).toBe('unknown');
  });
});

describe('figures from what publishers write', () => {
  it('config.json: Llama 3.1 8B is 8.03 B parameters, 16 GB in bf16, and its KV shape', () => {
    const w = weightsFromConfig(LLAMA_8B_CONFIG);
    expect(w?.parameters).toBe(8_030_261_248);
    expect(w?.bytes).toBe(2 * 8_030_261_248);
    expect(w?.exact).toBe(false);
    expect(shapeFromConfig(LLAMA_8B_CONFIG)).toEqual({ layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128, contextTrain: 131072 });
    // Served at Q4_K_M instead of its published dtype.
    expect(weightsFromConfig(LLAMA_8B_CONFIG, quantBytesPerParameter('Q4_K_M'))?.bytes).toBe(Math.ceil(8_030_261_248 * 0.58));
    // A multimodal wrapper: the language model's fields are under text_config.
    expect(shapeFromConfig({ model_type: 'llava', text_config: LLAMA_8B_CONFIG })?.layers).toBe(32);
    expect(weightsFromConfig({ ...LLAMA_8B_CONFIG, torch_dtype: 'float42' })).toBeUndefined();
  });

  it("a safetensors index and the Hub's dtype counts; an unknown dtype is an error, not a guess", () => {
    expect(weightsFromSafetensorsIndex({ metadata: { total_size: 16_060_522_496 }, weight_map: {} })).toEqual({
      bytes: 16_060_522_496,
      source: 'safetensors_index',
      exact: false,
    });
    expect(weightsFromSafetensorsIndex({ weight_map: {} })).toBeUndefined();
    expect(weightsFromDtypeCounts({ BF16: 8_030_261_248 })?.bytes).toBe(16_060_522_496);
    expect(weightsFromDtypeCounts({ F8_E4M3: 680e9, BF16: 3.9e9, F32: 41e6 })?.bytes).toBe(680e9 + 7.8e9 + 164e6);
    expect(() => weightsFromDtypeCounts({ F12: 1000 })).toThrow(/unrecognised dtype/);
  });

  it("Ollama's /api/show: the GGUF keys of model_info, the size on disk when known, else parameters × the quantization", () => {
    const show = {
      details: { quantization_level: 'Q4_K_M', parameter_size: '8.0B' },
      model_info: {
        'general.architecture': 'llama',
        'general.parameter_count': 8_030_261_248,
        'llama.block_count': 32,
        'llama.attention.head_count': 32,
        'llama.attention.head_count_kv': 8,
        'llama.embedding_length': 4096,
        'llama.context_length': 131072,
      },
    };
    const f = factsFromOllamaShow(show);
    expect(f.shape).toEqual({ layers: 32, kvHeads: 8, headDimK: 128, headDimV: 128, contextTrain: 131072 });
    expect(f.weights).toMatchObject({ source: 'ollama_show', bytes: Math.ceil(8_030_261_248 * 0.58) });
    expect(factsFromOllamaShow(show, 4_920_753_328).weights).toMatchObject({ source: 'ollama_size', bytes: 4_920_753_328 });
    expect(factsFromOllamaShow({ details: { quantization_level: 'MYSTERY' }, model_info: { 'general.parameter_count': 1e9 } }).weights).toBeUndefined();
  });
});
