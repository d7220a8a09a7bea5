// model_declarations as conservative as Go's (model_declaration_test.go, hub_declaration_sync_test.go,
// context_provenance_test.go): what cannot be established is left out, never guessed, never 0.
import { describe, expect, it } from 'vitest';
import {
  buildDeclaration,
  declaredCapacity,
  declaredEngine,
  declaredModalities,
  modelCategory,
  normalizeQuantization,
} from '../../../src/core/weights/declarations';

describe('quantization: the closed set', () => {
  it.each([
    // Go's TestNormalizeQuantizationClosedEnum
    ['awq', '', 'int4'],
    ['gguf', 'q4_k_m', 'int4'],
    ['', 'w4a16', 'int4'],
    ['', 'q8_0', 'int8'],
    ['fp8', '', 'fp8'],
    ['bf16', '', 'bf16'],
    ['int4', '', 'int4'],
    ['', '', undefined],
    ['exl2', 'unknown-scheme', undefined],
    // What engines say: llama.cpp's model_ftype, Ollama's quantization_level, config.json's dtype.
    ['', 'Q4_K - Medium', 'int4'],
    ['', 'IQ4_NL - 4.5 bpw', 'int4'],
    ['', 'all F32', 'fp32'],
    ['', 'F16', 'fp16'],
    ['', 'BF16', 'bf16'],
    ['', 'MXFP4 MoE', 'mxfp4'],
    ['', 'Q8_0', 'int8'],
    ['', 'bfloat16', 'bf16'],
    ['', 'float16', 'fp16'],
    // Not in the closed set: left out rather than rounded to a neighbour.
    ['', 'Q5_K - Medium', undefined],
    ['', 'Q6_K', undefined],
    ['gptq', '', undefined],
    ['gguf', '', undefined],
  ])('format %j, quantization %j -> %j', (format, quant, want) => {
    expect(normalizeQuantization(format || undefined, quant || undefined)).toBe(want);
  });
});

describe('engine', () => {
  it('names the engines the hub knows, in its words, and nothing else (Go TestEngineDetectionIsConservative)', () => {
    expect(declaredEngine('vllm')).toBe('vllm');
    expect(declaredEngine('sglang')).toBe('sglang');
    expect(declaredEngine('llamacpp')).toBe('llama.cpp');
    expect(declaredEngine('ollama')).toBe('ollama');
    expect(declaredEngine('tgi')).toBe('tgi');
    expect(declaredEngine('lmstudio')).toBeUndefined();
    expect(declaredEngine('openai')).toBeUndefined();
    expect(declaredEngine('unknown')).toBeUndefined();
    expect(declaredEngine(undefined)).toBeUndefined();
  });
});

describe('modalities by category (Go TestDeclaredModalitiesByCategory)', () => {
  it.each([
    ['text-generation', 'text', 'text'],
    ['multimodal', 'text', 'text'],
    ['embedding', 'text', 'embeddings'],
    ['image', 'text', 'image'],
    ['audio', 'audio', 'transcription'],
    [undefined, 'text', 'text'],
  ] as const)('%s -> %s in, %s out', (cat, inType, outType) => {
    const { input, output } = declaredModalities(cat, 32768);
    expect(input[0]!.type).toBe(inType);
    expect(output[0]!.type).toBe(outType);
  });

  it('multimodal also declares image input, or vision requests cannot be routed', () => {
    expect(declaredModalities('multimodal', 32768).input.map((m) => m.type)).toEqual(['text', 'image']);
  });

  it('chat output streams and names its parameters; the others do not claim streaming', () => {
    expect(declaredModalities(undefined, undefined).output[0]).toMatchObject({
      type: 'text',
      streaming: true,
      supported_parameters: expect.arrayContaining(['max_tokens', 'temperature']),
    });
    expect(declaredModalities('embedding', undefined).output[0]).toEqual({ type: 'embeddings' });
  });

  it('a window only when known (Go TestContextLengthOnlyDeclaredWhenKnown)', () => {
    expect(declaredModalities('text-generation', 0).input[0]!.max_context_length).toBeUndefined();
    expect(declaredModalities('text-generation', undefined).input[0]!.max_context_length).toBeUndefined();
    expect(declaredModalities('text-generation', 65536).input[0]!.max_context_length).toEqual({ value: 65536, unit: 'token' });
  });

  it("the owner's category first, then the engine's word (Ollama embedding, a vision model)", () => {
    expect(modelCategory('embedding', { vision: true })).toBe('embedding');
    expect(modelCategory(undefined, { embedding: true })).toBe('embedding');
    expect(modelCategory(undefined, { vision: true })).toBe('multimodal');
    expect(modelCategory('nonsense', undefined)).toBeUndefined();
  });
});

describe('one declaration', () => {
  it("carries what is known, with the hub's names, and leaves the rest out entirely (no keys, no zeros)", () => {
    const full = buildDeclaration({
      modelId: 'org/m',
      engine: 'llamacpp',
      engineQuantization: 'Q4_K - Medium',
      engineModalities: { vision: true },
      context: { length: 16384, source: 'detected' },
      capacity: 2,
      weightHash: 'ab'.repeat(32),
    });
    expect(full).toEqual({
      schema_version: '1',
      model_id: 'org/m',
      context_source: 'detected',
      weight_hash: 'ab'.repeat(32),
      hash_algo: 'sha256',
      quantization: 'int4',
      engine: 'llama.cpp',
      input_modalities: [{ type: 'text', max_context_length: { value: 16384, unit: 'token' } }, { type: 'image' }],
      output_modalities: [{ type: 'text', streaming: true, supported_parameters: expect.any(Array) }],
      capacity: [{ type: 'concurrency', unit: 'request', value: 2 }],
    });
    const bare = buildDeclaration({ modelId: 'x', engine: 'lmstudio', context: { length: 0, source: 'unknown' }, capacity: 0 });
    expect(Object.keys(bare).sort()).toEqual(['input_modalities', 'model_id', 'output_modalities', 'schema_version']);
    expect(JSON.stringify(bare)).not.toMatch(/context_source|max_context_length|weight_hash|hash_algo|capacity|quantization|engine/);
  });

  it("the owner's format/quantization win over the engine's word", () => {
    expect(buildDeclaration({ modelId: 'm', format: 'awq', engineQuantization: 'bfloat16' }).quantization).toBe('int4');
    expect(buildDeclaration({ modelId: 'm', format: 'exl2', quantization: 'x', engineQuantization: 'Q8_0' }).quantization).toBe('int8');
  });

  it('a window the engine states in its own API (llama.cpp n_ctx, Ollama num_ctx) is declared without claiming "detected"', () => {
    const d = buildDeclaration({ modelId: 'm', context: { length: 512, source: 'engine' } });
    expect(d.input_modalities[0]!.max_context_length).toEqual({ value: 512, unit: 'token' });
    expect(d.context_source).toBeUndefined();
    expect(buildDeclaration({ modelId: 'm', context: { length: 128000, source: 'override' } }).context_source).toBe('override');
    // pending and unknown windows: nothing (Go TestDeclarationCarriesProvenance).
    expect(JSON.stringify(buildDeclaration({ modelId: 'm', context: { length: 0, source: 'pending' } }))).not.toContain('context');
  });
});

describe("capacity from the node's real limiter (Go TestDeclarationCarriesConcurrencyCapacity)", () => {
  const auto = { capacityAuto: true, maxConcurrentPerEndpoint: 4 };
  it('sums the slots engines publish', () => {
    const slots = new Map([
      ['a', { slots: 2 }],
      ['b', { slots: 3 }],
    ]);
    expect(
      declaredCapacity(
        {
          endpoints: [
            { url: 'a', engineType: 'llamacpp' },
            { url: 'b', engineType: 'sglang' },
          ],
        },
        auto,
        (u) => slots.get(u),
      ),
    ).toBe(5);
  });
  it("leaves it out when an engine says nothing (the agent's fallback of 4 is not a stated figure), or it is vLLM's queue reading", () => {
    expect(declaredCapacity({ endpoints: [{ url: 'a', engineType: 'lmstudio' }] }, auto, () => undefined)).toBeUndefined();
    expect(declaredCapacity({ endpoints: [{ url: 'a', engineType: 'vllm' }] }, auto, () => ({ slots: 7 }))).toBeUndefined();
    expect(declaredCapacity({ endpoints: [] }, auto, () => ({ slots: 1 }))).toBeUndefined();
  });
  it("the owner's limits: a fixed MaxConcurrentPerEndpoint, and a model's max_concurrent capped by what its endpoints admit", () => {
    expect(declaredCapacity({ endpoints: [{ url: 'a' }, { url: 'b' }] }, { capacityAuto: false, maxConcurrentPerEndpoint: 3 }, () => undefined)).toBe(6);
    expect(declaredCapacity({ maxConcurrent: 2, endpoints: [{ url: 'a', engineType: 'vllm' }] }, auto, () => undefined)).toBe(2);
    expect(declaredCapacity({ maxConcurrent: 40, endpoints: [{ url: 'a', engineType: 'llamacpp' }] }, auto, () => ({ slots: 8 }))).toBe(8);
  });
});
