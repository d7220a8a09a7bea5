// How much GPU memory a model needs to be served here, and whether that fits this machine: weights + KV
// cache for the context and slots chosen + a fixed overhead (the Go provider's internal/vram arithmetic,
// in our words). Three states, never two: `unknown` is its own answer with its reason, and it is never
// counted as `fits` (internal/market/fit.go: the rule it replaced passed 685 GB models onto 10 GB cards).
// Every unresolved question errs towards "more memory": an over-estimate declines a model that would have
// fitted; an under-estimate is an out-of-memory kill after the weights were fetched.

export const GIB = 1024 ** 3;
export const MIB = 1024 ** 2;

/** The CUDA context, cuBLAS workspace and compute buffers every backend allocates beside weights and cache (Go: 1 GiB). */
export const DEFAULT_OVERHEAD_BYTES = 1 * GIB;
/** Padding of a figure derived from published counts (not measured from the file itself): Go's 1.10. */
export const DERIVED_SAFETY = 1.1;
/** The KV cache element of llama.cpp, vLLM and SGLang by default: f16. */
export const DEFAULT_KV_BYTES = 2;
/** The context a recommendation plans for when the network says nothing: enough for the chats it routes. */
export const DEFAULT_CONTEXT = 8192;

/** Where the weights figure came from: the file's own tensor table is exact; the rest are derived. */
export type WeightsSource = 'gguf' | 'safetensors_index' | 'dtype_counts' | 'config' | 'ollama_show' | 'ollama_size';

export interface WeightsFigure {
  bytes: number;
  source: WeightsSource;
  /** True only for a figure read from the very file that will be loaded (a GGUF's tensor table). */
  exact: boolean;
  parameters?: number;
}

/** The shape that sizes the KV cache. Key and value widths are per KV head (they differ in some models). */
export interface KvShape {
  layers: number;
  kvHeads: number;
  headDimK: number;
  headDimV: number;
  /** The context the model was trained for (its maximum). */
  contextTrain?: number;
}

export interface Plan {
  /** Tokens per slot (llama.cpp's n_ctx_slot, vLLM's max-model-len). */
  contextLength: number;
  /** Sequences served at once (llama.cpp -np, vLLM --max-num-seqs): it multiplies the cache. */
  slots: number;
  kvBytesPerElement?: number;
  overheadBytes?: number;
}

/** Why an estimate or a fit is unknown: stable codes, with the words beside them. */
export type UnknownCode = 'no_weights_figure' | 'no_kv_shape' | 'unrecognised_dtype' | 'no_gpu_memory' | 'unreadable_file';

export type VramEstimate =
  | {
      known: true;
      weightsBytes: number;
      kvBytes: number;
      overheadBytes: number;
      totalBytes: number;
      weightsFrom: WeightsSource;
      exact: boolean;
      contextLength: number;
      slots: number;
      /** Every assumption taken, so a surprising figure can be argued with. */
      notes: string[];
    }
  | { known: false; code: UnknownCode; reason: string };

export type FitState = 'fits' | 'too_large' | 'unknown';

export interface Fit {
  fit: FitState;
  /** For unknown: why (stable code and words). */
  code?: UnknownCode;
  reason?: string;
  /** The figure compared and where it came from. */
  needBytes?: number;
  budgetBytes?: number;
  basis?: 'estimate' | 'network';
}

/** Bytes of the KV cache: layers × slots × context × KV heads × (key + value width) × bytes per element. */
export function kvCacheBytes(shape: KvShape, plan: Plan): number {
  const perTokenPerLayer = shape.kvHeads * (shape.headDimK + shape.headDimV);
  return shape.layers * plan.slots * plan.contextLength * perTokenPerLayer * (plan.kvBytesPerElement ?? DEFAULT_KV_BYTES);
}

/** A KV shape is only used when every term is a positive whole number: a missing one is unknown, never zero. */
function shapeProblem(s: KvShape | undefined): string | undefined {
  if (!s) return 'nothing says how many layers and KV heads the model has';
  for (const [k, v] of Object.entries({ layers: s.layers, kvHeads: s.kvHeads, headDimK: s.headDimK, headDimV: s.headDimV })) {
    if (!Number.isInteger(v) || v <= 0) return `the model's ${k} is not known`;
  }
  return undefined;
}

/** The estimate for a plan. A derived weights figure is padded (DERIVED_SAFETY); an exact one is not. */
export function estimateVram(weights: WeightsFigure | undefined, shape: KvShape | undefined, plan: Plan): VramEstimate {
  if (!weights || !(weights.bytes > 0))
    return {
      known: false,
      code: 'no_weights_figure',
      reason: 'no GGUF header, safetensors index, config.json or Ollama report says how large the weights are',
    };
  const bad = shapeProblem(shape);
  if (bad) return { known: false, code: 'no_kv_shape', reason: `${bad}, so the KV cache cannot be sized` };
  const notes: string[] = [];
  let contextLength = plan.contextLength;
  if (shape!.contextTrain && shape!.contextTrain > 0 && contextLength > shape!.contextTrain) {
    notes.push(`context ${contextLength} is past the model's ${shape!.contextTrain}: planned at ${shape!.contextTrain}`);
    contextLength = shape!.contextTrain;
  }
  const slots = Math.max(1, Math.floor(plan.slots));
  const kvBytes = kvCacheBytes(shape!, { ...plan, contextLength, slots });
  const overheadBytes = plan.overheadBytes ?? DEFAULT_OVERHEAD_BYTES;
  let weightsBytes = weights.bytes;
  if (!weights.exact) {
    weightsBytes = Math.ceil(weights.bytes * DERIVED_SAFETY);
    notes.push(`weights derived from ${weights.source}: padded by ${Math.round((DERIVED_SAFETY - 1) * 100)} %`);
  }
  return {
    known: true,
    weightsBytes,
    kvBytes,
    overheadBytes,
    totalBytes: weightsBytes + kvBytes + overheadBytes,
    weightsFrom: weights.source,
    exact: weights.exact,
    contextLength,
    slots,
    notes,
  };
}

/**
 * The fit of a model against this machine's GPU memory (bytes; undefined when no GPU reported it). Our own
 * estimate first; without one, the network's min_vram_gb only when the network says it is known
 * (vram_known). Unknown wins over everything else: an unmeasured need or an unseen GPU is no evidence.
 */
export function fitOf(estimate: VramEstimate, budgetBytes: number | undefined, network?: { minVramGb: number; vramKnown: boolean }): Fit {
  if (budgetBytes === undefined || !(budgetBytes > 0)) return { fit: 'unknown', code: 'no_gpu_memory', reason: 'no GPU here reported its memory' };
  if (estimate.known) return { fit: estimate.totalBytes <= budgetBytes ? 'fits' : 'too_large', needBytes: estimate.totalBytes, budgetBytes, basis: 'estimate' };
  if (network && network.vramKnown && network.minVramGb > 0) {
    const need = network.minVramGb * 1e9;
    return { fit: need <= budgetBytes ? 'fits' : 'too_large', needBytes: need, budgetBytes, basis: 'network' };
  }
  return { fit: 'unknown', code: estimate.code, reason: estimate.reason };
}

/** GiB with one decimal, for tables. */
export function gib(bytes: number): string {
  return `${(bytes / GIB).toFixed(1)} GiB`;
}
