// v0.5 model_declarations (schema "1"): what the marketplace routes a model by, then measures. The hub reads
// them in place of model_hashes when both are sent (hub_declaration_sync_test.go), so they must carry every
// fact this node knows, and only those (model_declaration_test.go): a value that cannot be established is
// left out, never guessed, never 0.
//   engine        the engine type all of a model's endpoints share, in the hub's words (llama.cpp, not llamacpp);
//                 LM Studio, a generic OpenAI server or a mix: left out
//   quantization  the closed set; the owner's models.json format/quantization first, else what the engine
//                 says (llama.cpp /props model_ftype, Ollama details.quantization_level, a Hugging Face
//                 config.json quantization_config / torch_dtype)
//   modalities    from the model's category: models.json `category`, else the engine's own metadata
//                 (Ollama capabilities, llama.cpp /props modalities), else text in, text out
//   window        max_context_length only for a window the owner set or the engine states; context_source
//                 only in the hub's words (override, detected = an engine's max_model_len)
//   capacity      the node's real limit for the model: the owner's, or the engine's published slots
//   weight_hash   the composite of a manifest (Go's, or the one this node computed: src/core/weights)
import type { EngineType } from '../../shared/types';
import type { ModelContext } from '../engine-client/context-length';
import type { DeclaredEngine, DeclaredInputModality, DeclaredOutputModality, DeclaredQuantization, ModelDeclaration } from '../protocol/messages';
import { normalizeCategory, type ModelCategory } from '../engine-client/category';

export const DECLARATION_SCHEMA = '1';

/** The chat parameters every engine this node proxies to honours on /v1/chat/completions (the relay passes the body through). */
export const SUPPORTED_CHAT_PARAMETERS = ['max_tokens', 'temperature', 'top_p', 'stop', 'seed', 'frequency_penalty', 'presence_penalty', 'logprobs'] as const;

export { normalizeCategory, type ModelCategory };

/** What an engine's own metadata says a model takes in and does. */
export interface EngineModalities {
  /** The engine serves embeddings only (Ollama capabilities ["embedding"] without "completion"). */
  embedding?: boolean;
  /** The model reads images (Ollama "vision", llama.cpp /props modalities.vision). */
  vision?: boolean;
  /** The chat model reads audio (llama.cpp /props modalities.audio). */
  audio?: boolean;
}

const ENGINE_NAMES: Partial<Record<EngineType, DeclaredEngine>> = { vllm: 'vllm', sglang: 'sglang', llamacpp: 'llama.cpp', ollama: 'ollama', tgi: 'tgi' };

/** The hub's name of an engine type; undefined for LM Studio, a generic OpenAI server and unknown ones. */
export function declaredEngine(type: EngineType | undefined): DeclaredEngine | undefined {
  return type ? ENGINE_NAMES[type] : undefined;
}

const CLOSED = new Set<string>(['int4', 'int8', 'fp4', 'mxfp4', 'nvfp4', 'fp6', 'fp8', 'mxfp8', 'fp16', 'bf16', 'fp32']);

/** One quantization word (a format, a scheme, a GGUF type, llama.cpp's model_ftype) in the closed set, or undefined. */
function quantWord(raw: string | undefined): DeclaredQuantization | undefined {
  // llama.cpp's model_ftype reads "all F32", "F16", "Q4_K - Medium", "IQ4_NL - 4.5 bpw", "MXFP4 MoE".
  const s = (raw ?? '')
    .trim()
    .toLowerCase()
    .replace(/^(all|mostly)\s+/, '');
  if (s === '') return undefined;
  const w = s.split(/\s/)[0] ?? '';
  if (CLOSED.has(w)) return w as DeclaredQuantization;
  if (w === 'f16' || w === 'float16' || w === 'half') return 'fp16';
  if (w === 'bfloat16') return 'bf16';
  if (w === 'f32' || w === 'float32' || w === 'float') return 'fp32';
  if (w === 'fp8_e4m3' || w === 'fp8_e5m2' || w === 'e4m3' || w === 'w8a8-fp8') return 'fp8';
  // AWQ and W4A16 store 4-bit integer weights; GGUF's 4-bit families (Q4_0, Q4_1, Q4_K_*, IQ4_*) too.
  if (w === 'awq' || w === 'w4a16' || /^i?q4(_|$)/.test(w)) return 'int4';
  if (w === 'q8_0' || w === 'w8a16') return 'int8';
  // gptq (4 or 8 bits), exl2, q5/q6/q2/q3 GGUF types: nothing in the closed set says them.
  return undefined;
}

/**
 * The declared quantization from a weight format and a quantization detail (Go's normalizeQuantization):
 * the detail first ("gguf" + "q4_k_m" is int4), then the format ("awq" is int4); unknown gives undefined.
 */
export function normalizeQuantization(format: string | undefined, quantization: string | undefined): DeclaredQuantization | undefined {
  return quantWord(quantization) ?? quantWord(format);
}

/**
 * Input and output modalities for a category (Go's declaredModalitiesFor): embedding is text in,
 * embeddings out; image is text in, image out; audio is audio in, transcription out; multimodal reads
 * images too; anything else is text in, streamed text out. A window is declared only when known.
 */
export function declaredModalities(
  category: ModelCategory | undefined,
  window: number | undefined,
  extra: { audioIn?: boolean } = {},
): { input: DeclaredInputModality[]; output: DeclaredOutputModality[] } {
  const text: DeclaredInputModality = { type: 'text', ...(window && window > 0 ? { max_context_length: { value: window, unit: 'token' as const } } : {}) };
  const chat: DeclaredOutputModality = { type: 'text', streaming: true, supported_parameters: [...SUPPORTED_CHAT_PARAMETERS] };
  switch (category) {
    case 'embedding':
      return { input: [text], output: [{ type: 'embeddings' }] };
    case 'image':
      return { input: [{ type: 'text' }], output: [{ type: 'image' }] };
    case 'audio':
      return { input: [{ type: 'audio' }], output: [{ type: 'transcription' }] };
    case 'rerank':
      return { input: [text], output: [{ type: 'rerank' }] };
    case 'multimodal':
      return { input: [text, { type: 'image' }, ...(extra.audioIn ? [{ type: 'audio' as const }] : [])], output: [chat] };
    default:
      return { input: [text, ...(extra.audioIn ? [{ type: 'audio' as const }] : [])], output: [chat] };
  }
}

/** The category a model is declared with: the owner's word, else the engine's metadata, else none (text). */
export function modelCategory(owner: string | undefined, engine: EngineModalities | undefined): ModelCategory | undefined {
  const own = normalizeCategory(owner);
  if (own) return own;
  if (engine?.embedding) return 'embedding';
  if (engine?.vision) return 'multimodal';
  return undefined;
}

/** What one model's declaration is built from (serving/announce.ts gathers it). */
export interface DeclarationFacts {
  modelId: string;
  /** models.json `category`. */
  category?: string;
  /** The engine's own word on what the model reads and does. */
  engineModalities?: EngineModalities;
  /** The engine type of every endpoint when they agree. */
  engine?: EngineType;
  /** The owner's models.json format / quantization. */
  format?: string;
  quantization?: string;
  /** What the engine or the model's files say (llama.cpp model_ftype, Ollama quantization_level, config.json). */
  engineQuantization?: string;
  context?: ModelContext;
  /** Requests the node runs at once for this model, when that is the owner's or the engine's figure. */
  capacity?: number;
  /** The composite sha256 of the model's weight files. */
  weightHash?: string;
}

/** The declared window: the owner's, or one an engine states (never a trained maximum, never 0). */
function windowOf(ctx: ModelContext | undefined): { length?: number; source?: 'override' | 'detected' } {
  if (!ctx || !(ctx.length > 0)) return {};
  if (ctx.source === 'override' || ctx.source === 'detected') return { length: ctx.length, source: ctx.source };
  // A window read from the engine's own API (llama.cpp /props, Ollama num_ctx) is real but is not what the
  // hub calls "detected" (mapping_mirror_test.go): declared, with no source word claimed for it.
  if (ctx.source === 'engine') return { length: ctx.length };
  return {};
}

export function buildDeclaration(f: DeclarationFacts): ModelDeclaration {
  const win = windowOf(f.context);
  const category = modelCategory(f.category, f.engineModalities);
  const { input, output } = declaredModalities(category, win.length, { audioIn: f.engineModalities?.audio === true && category !== 'audio' });
  const engine = declaredEngine(f.engine);
  const quantization = normalizeQuantization(f.format, f.quantization) ?? normalizeQuantization(undefined, f.engineQuantization);
  const capacity = f.capacity !== undefined && Number.isInteger(f.capacity) && f.capacity > 0 ? f.capacity : undefined;
  return {
    schema_version: DECLARATION_SCHEMA,
    model_id: f.modelId,
    ...(win.source && win.length ? { context_source: win.source } : {}),
    ...(f.weightHash ? { weight_hash: f.weightHash, hash_algo: 'sha256' as const } : {}),
    ...(quantization ? { quantization } : {}),
    ...(engine ? { engine } : {}),
    input_modalities: input,
    output_modalities: output,
    ...(capacity ? { capacity: [{ type: 'concurrency' as const, unit: 'request' as const, value: capacity }] } : {}),
  };
}

/**
 * Requests the node runs at once for a model, when that is a figure someone stated: the owner's limit for the
 * model (capped by what its endpoints admit), else the sum of its endpoints' limits when each is the owner's
 * fixed MaxConcurrentPerEndpoint or slots the engine publishes (llama.cpp total_slots, SGLang
 * max_running_requests, Ollama's documented 1). The agent's fallback of 4 for an engine that says nothing,
 * and vLLM's figure read off its queue (it publishes no max_num_seqs), are not declared.
 */
export function declaredCapacity(
  model: { maxConcurrent?: number; endpoints: ReadonlyArray<{ url: string; engineType?: EngineType }> },
  agent: { capacityAuto: boolean; maxConcurrentPerEndpoint: number },
  engineCapacity: (url: string) => { slots: number } | undefined,
): number | undefined {
  if (model.endpoints.length === 0) return undefined;
  let sum = 0;
  let stated = true;
  for (const ep of model.endpoints) {
    if (!agent.capacityAuto) {
      sum += agent.maxConcurrentPerEndpoint;
      continue;
    }
    const cap = ep.engineType === 'vllm' ? undefined : engineCapacity(ep.url);
    if (cap) sum += cap.slots;
    else {
      stated = false;
      sum += agent.maxConcurrentPerEndpoint;
    }
  }
  if (model.maxConcurrent !== undefined) return Math.min(model.maxConcurrent, sum);
  return stated ? sum : undefined;
}
