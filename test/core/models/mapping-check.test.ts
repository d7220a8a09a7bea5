// A network id checked against what the engine reports about the model behind it.
import { describe, expect, it } from 'vitest';
import { checkMapping } from '../../../src/core/models/mapping-check';

describe('checkMapping', () => {
  it('a 0.15 M-parameter file as Llama 3.1 8B: mapping_parameters_mismatch', () => {
    expect(checkMapping('meta-llama/Llama-3.1-8B-Instruct', '/m/tiny.gguf', { parameters: 147_392, quantization: 'all F32' })).toMatchObject({
      code: 'mapping_parameters_mismatch',
      signature: 'parameters:/m/tiny.gguf:147392',
    });
  });

  it('the size the id names, as reported (8.03 B, 7.6 B): no finding', () => {
    expect(checkMapping('meta-llama/Llama-3.1-8B-Instruct', 'llama', { parameters: 8.03e9 })).toBeUndefined();
    expect(checkMapping('Qwen/Qwen2.5-7B-Instruct', 'qwen2.5:7b', { parameters: 7.6e9, quantization: 'Q4_K_M' })).toBeUndefined();
  });

  it('an AWQ id served from an F16 file: mapping_quantization_mismatch', () => {
    expect(checkMapping('Qwen/Qwen2.5-7B-Instruct-AWQ', 'q.gguf', { parameters: 7.6e9, quantization: 'mostly F16' })?.code).toBe(
      'mapping_quantization_mismatch',
    );
  });

  it('nothing reported, or an id that names no size: nothing claimed', () => {
    expect(checkMapping('meta-llama/Llama-3.1-8B-Instruct', 'x', undefined)).toBeUndefined();
    expect(checkMapping('swan-test/tiny-chat', 'x', { parameters: 147_392 })).toBeUndefined();
  });
});
