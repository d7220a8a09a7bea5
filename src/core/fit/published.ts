// The weights figure and KV shape from what a model's publisher wrote, for a model not yet on disk or not a
// GGUF: a safetensors index (`model.safetensors.index.json`: metadata.total_size, the tensors' bytes), the
// parameter count per dtype the Hugging Face Hub publishes (`safetensors.parameters`), or config.json
// (parameters derived from its dimensions × the dtype). Ollama's /api/show (`model_info` in GGUF key names,
// `details.quantization_level`) is read the same way. Every figure here is derived, never exact; a dtype
// or quantization not in the tables is unknown, never a guess (a 4-byte format taken as 2 halves the need).
import { z } from 'zod';
import type { KvShape, WeightsFigure } from './estimate';

/** Bytes per element of safetensors dtypes (the Hub's names). */
const DTYPE_BYTES: Record<string, number> = {
  F64: 8,
  I64: 8,
  U64: 8,
  F32: 4,
  I32: 4,
  U32: 4,
  BF16: 2,
  F16: 2,
  I16: 2,
  U16: 2,
  F8_E4M3: 1,
  F8_E5M2: 1,
  I8: 1,
  U8: 1,
  BOOL: 1,
  F4: 0.5,
  I4: 0.5,
  U4: 0.5,
};

/** config.json's torch_dtype names. */
const TORCH_DTYPE_BYTES: Record<string, number> = { float32: 4, float16: 2, bfloat16: 2, float8_e4m3fn: 1, int8: 1 };

/**
 * Bytes per parameter of quantizations as named in files and Ollama tags: measured sizes (block scales and
 * the tensors kept at higher precision included), each erring high within its format. Longest name first.
 */
const QUANT_BYTES: Array<[string, number]> = [
  ['q4_k_m', 0.58],
  ['q4_k_s', 0.5528],
  ['q5_k_m', 0.73],
  ['q5_k_s', 0.72],
  ['q3_k_m', 0.44],
  ['q3_k_l', 0.48],
  ['q3_k_s', 0.42],
  ['q6_k', 0.82],
  ['q8_0', 1.0625],
  ['q5_0', 0.72],
  ['q5_1', 0.75],
  ['q4_0', 0.56],
  ['q4_1', 0.6],
  ['q2_k', 0.33],
  ['iq4_xs', 0.54],
  ['iq4_nl', 0.56],
  ['awq', 0.6],
  ['gptq', 0.6],
  ['fp8', 1],
  ['int8', 1],
  ['bf16', 2],
  ['fp16', 2],
  ['f16', 2],
  ['fp32', 4],
  ['f32', 4],
];

/** Bytes per parameter a quantization name stands for; undefined when none is recognised. */
export function quantBytesPerParameter(name: string): number | undefined {
  const n = name.toLowerCase();
  return QUANT_BYTES.find(([q]) => n.includes(q))?.[1];
}

const count = z.number().int().nonnegative().max(1e15);

/** `model.safetensors.index.json`: metadata.total_size is the bytes of every tensor. */
export function weightsFromSafetensorsIndex(json: unknown): WeightsFigure | undefined {
  const r = z
    .object({ metadata: z.object({ total_size: count }).passthrough() })
    .passthrough()
    .safeParse(json);
  if (!r.success || r.data.metadata.total_size <= 0) return undefined;
  return { bytes: r.data.metadata.total_size, source: 'safetensors_index', exact: false };
}

/** The Hub's `safetensors.parameters` ({BF16: n, F32: m}): bytes per dtype summed. Throws on a dtype not in the table. */
export function weightsFromDtypeCounts(params: Record<string, number>): WeightsFigure | undefined {
  let bytes = 0;
  let parameters = 0;
  for (const [dtype, n] of Object.entries(params)) {
    if (!(n > 0)) continue;
    const size = DTYPE_BYTES[dtype.trim().toUpperCase()];
    if (size === undefined) throw new Error(`unrecognised dtype ${dtype}`);
    bytes += n * size;
    parameters += n;
  }
  return bytes > 0 ? { bytes, source: 'dtype_counts', exact: false, parameters } : undefined;
}

const dim = z.number().int().positive().max(10_000_000).optional().catch(undefined);
const configSchema = z
  .object({
    num_hidden_layers: dim,
    hidden_size: dim,
    intermediate_size: dim,
    num_attention_heads: dim,
    num_key_value_heads: dim,
    head_dim: dim,
    vocab_size: dim,
    max_position_embeddings: dim,
    num_local_experts: dim,
    num_experts: dim,
    tie_word_embeddings: z.boolean().optional().catch(undefined),
    torch_dtype: z.string().max(32).optional().catch(undefined),
  })
  .passthrough();
type ModelConfig = z.infer<typeof configSchema>;

/** config.json, or its text_config when the top level is a multimodal wrapper. */
function languageConfig(json: unknown): ModelConfig | undefined {
  const top = configSchema.safeParse(json);
  if (!top.success) return undefined;
  if (top.data.num_hidden_layers) return top.data;
  const inner = configSchema.safeParse((json as { text_config?: unknown }).text_config);
  return inner.success && inner.data.num_hidden_layers ? { ...inner.data, torch_dtype: inner.data.torch_dtype ?? top.data.torch_dtype } : undefined;
}

/** The KV shape a config.json gives (heads share K and V under grouped-query attention). */
export function shapeFromConfig(json: unknown): KvShape | undefined {
  const c = languageConfig(json);
  if (!c?.num_hidden_layers || !c.num_attention_heads) return undefined;
  const headDim = c.head_dim ?? (c.hidden_size ? c.hidden_size / c.num_attention_heads : undefined);
  if (!headDim) return undefined;
  return {
    layers: c.num_hidden_layers,
    kvHeads: c.num_key_value_heads ?? c.num_attention_heads,
    headDimK: headDim,
    headDimV: headDim,
    ...(c.max_position_embeddings ? { contextTrain: c.max_position_embeddings } : {}),
  };
}

/**
 * Parameters of a decoder-only transformer from config.json (embeddings, per layer: attention projections
 * and a gated MLP, × experts for a mixture; the output head unless tied), × the dtype's bytes (or
 * `bytesPerParameter` for serving at another precision). Undefined when a dimension is missing.
 */
export function weightsFromConfig(json: unknown, bytesPerParameter?: number): WeightsFigure | undefined {
  const c = languageConfig(json);
  const shape = shapeFromConfig(json);
  if (!c || !shape || !c.hidden_size || !c.intermediate_size || !c.vocab_size) return undefined;
  const h = c.hidden_size;
  const qWidth = c.num_attention_heads! * shape.headDimK;
  const kvWidth = shape.kvHeads * shape.headDimK;
  const attention = h * qWidth + 2 * h * kvWidth + qWidth * h;
  const experts = c.num_local_experts ?? c.num_experts ?? 1;
  const mlp = 3 * h * c.intermediate_size * experts;
  const norms = 2 * h;
  const embeddings = c.vocab_size * h * (c.tie_word_embeddings === false || c.tie_word_embeddings === undefined ? 2 : 1);
  const parameters = embeddings + shape.layers * (attention + mlp + norms) + h;
  const bytes = bytesPerParameter ?? (c.torch_dtype ? TORCH_DTYPE_BYTES[c.torch_dtype.toLowerCase()] : undefined);
  if (!bytes) return undefined;
  return { bytes: Math.ceil(parameters * bytes), source: 'config', exact: false, parameters };
}

const showSchema = z
  .object({
    details: z
      .object({ quantization_level: z.string().max(64).optional().catch(undefined), parameter_size: z.string().max(64).optional().catch(undefined) })
      .passthrough()
      .optional()
      .catch(undefined),
    model_info: z.record(z.string().max(256), z.unknown()).optional().catch(undefined),
  })
  .passthrough();

/**
 * Ollama's POST /api/show answer: `model_info` carries the GGUF keys (general.architecture,
 * general.parameter_count, `<arch>.block_count`…), `details.quantization_level` the quantization.
 * The weights: the size on disk from /api/tags when given (the blob is the GGUF), else parameters × the
 * quantization's bytes.
 */
export function factsFromOllamaShow(json: unknown, sizeOnDisk?: number): { weights?: WeightsFigure; shape?: KvShape } {
  const r = showSchema.safeParse(json);
  if (!r.success) return {};
  const info = r.data.model_info ?? {};
  const n = (k: string): number | undefined => (typeof info[k] === 'number' && Number.isFinite(info[k]) ? (info[k] as number) : undefined);
  const arch = typeof info['general.architecture'] === 'string' ? (info['general.architecture'] as string) : undefined;
  const parameters = n('general.parameter_count');
  let shape: KvShape | undefined;
  if (arch) {
    const layers = n(`${arch}.block_count`);
    const heads = n(`${arch}.attention.head_count`);
    const kvHeads = n(`${arch}.attention.head_count_kv`) ?? heads;
    const embd = n(`${arch}.embedding_length`);
    const headDim = embd && heads ? embd / heads : undefined;
    const k = n(`${arch}.attention.key_length`) ?? headDim;
    const v = n(`${arch}.attention.value_length`) ?? headDim;
    const ctx = n(`${arch}.context_length`);
    if (layers && kvHeads && k && v) shape = { layers, kvHeads, headDimK: k, headDimV: v, ...(ctx ? { contextTrain: ctx } : {}) };
  }
  let weights: WeightsFigure | undefined;
  if (sizeOnDisk && sizeOnDisk > 0) weights = { bytes: sizeOnDisk, source: 'ollama_size', exact: false, ...(parameters ? { parameters } : {}) };
  else {
    const per = r.data.details?.quantization_level ? quantBytesPerParameter(r.data.details.quantization_level) : undefined;
    if (parameters && per) weights = { bytes: Math.ceil(parameters * per), source: 'ollama_show', exact: false, parameters };
  }
  return { ...(weights ? { weights } : {}), ...(shape ? { shape } : {}) };
}
