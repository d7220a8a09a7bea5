// Swan Inference provider protocol, in the dialect of the Go computing-provider the real hub is built
// against (../shared/HUB-PROTOCOL.md; docs/hub-dialect.md). Inbound messages are schema-checked here
// (both the Go and the seed 000 forms are accepted); outbound ones are typed builders of the Go form.
import crypto from 'node:crypto';
import { z } from 'zod';
import { formatIssues } from '../../shared/zod-issues';
import { JSON_LIMITS, parseJson, type BoundedJsonError } from '../http/bounded-json';

export const PROTOCOL_VERSION = '1';
/**
 * register's `cp_version`: the Go computing-provider release whose hub dialect this node speaks. The hub
 * reads an absent or low version as a pre-0.4 node, and compares it with its latest release for
 * `upgrade_available`. Raised when the node speaks a newer release's dialect; the app's own version goes
 * in `client_version` (docs/decisions/cp-version.md).
 */
export const HUB_DIALECT_VERSION = '0.5.0';
/** register's `client`: which provider software this is (the Go node sends none). */
export const CLIENT_NAME = 'swan-provider-console';
/**
 * What register advertises. The Go provider sends ["inference", "verification"]; those two come first
 * and the rest are ours (hubs ignore capabilities they do not know). resume-v1 is only an offer: the
 * agent keeps a stream going across a dropped link only when the hub's register ack says it resumes.
 */
export const CAPABILITIES = ['inference', 'verification', 'stream', 'warmup', 'benchmark', 'cancel', 'resume-v1'] as const;
/** The register ack extension a hub that resumes streams announces (`payload.extensions`). */
export const RESUME_EXTENSION = 'resume-v1';
export const MAX_MESSAGE_BYTES = 1024 * 1024;

const envelope = z.object({
  type: z.string().min(1).max(64),
  request_id: z.string().max(256).optional(),
  payload: z.unknown().optional(),
});
export type Envelope = z.infer<typeof envelope>;

const openAiRequest = z
  .object({
    model: z.string().optional(),
    messages: z.array(z.unknown()).optional(),
    prompt: z.union([z.string(), z.array(z.unknown())]).optional(),
  })
  .passthrough();

/**
 * The v0.5 hub says what a request is in `operation` (the OpenAI path after /v1/: chat/completions,
 * embeddings, images/generations, audio/transcriptions; Go's operations.go). A chat request, or one that
 * does not say, needs what a chat or text completion reads; the others carry their own fields (input, file).
 */
export const inferencePayload = z
  .object({
    endpoint_id: z.string().max(256).optional(),
    model_id: z.string().min(1).max(256),
    stream: z.boolean().optional(),
    operation: z.string().max(64).optional(),
    request: openAiRequest,
  })
  .superRefine((p, ctx) => {
    const r = p.request as Record<string, unknown>;
    const chat = p.operation === undefined || p.operation === 'chat/completions' || p.operation === 'completions';
    const asked = r.messages !== undefined || r.prompt !== undefined || (p.operation === undefined && (r.input !== undefined || r.file !== undefined));
    if (chat && !asked) ctx.addIssue({ code: 'custom', path: ['request'], message: 'request needs "messages" or "prompt"' });
  });

export const warmupPayload = z.object({
  model_id: z.string().min(1).max(256),
  warmup_type: z.string().max(64).optional(),
});

/** Go's AckPayload: `request_id` has no omitempty, so a hub that leaves it unset sends "". */
export const ackPayload = z
  .object({
    request_id: z.string().max(256).optional(),
    success: z.boolean().optional(),
    message: z.string().optional(),
    /** Hub features (ours: "resume-v1"); the Go hub sends none. */
    extensions: z.array(z.string().max(64)).max(32).optional(),
    /**
     * v0.5 register ack: the announced models the hub accepted (hub_declaration_sync_test.go). A model
     * announced but not listed gets no traffic. Absent from heartbeat acks and older hubs. A wrong type
     * fails the ack as Go's decoder does; lengths and counts are clamped where it is recorded (hub/hub-view.ts).
     */
    registered_models: z.array(z.string()).optional(),
    /** v0.5 register ack: the hub's advice that a newer provider release exists. */
    upgrade_available: z.object({ running: z.string().optional(), latest: z.string().optional(), message: z.string().optional() }).passthrough().optional(),
  })
  .passthrough();

export type AckPayload = z.infer<typeof ackPayload>;

export const errorPayload = z
  .object({ request_id: z.string().optional(), code: z.union([z.number(), z.string()]).optional(), message: z.string().optional() })
  .passthrough();

export const cancelPayload = z.object({ request_id: z.string().min(1).max(256), reason: z.string().max(256).optional() });
export const resumePayload = z.object({ request_id: z.string().min(1).max(256), last_seq: z.number().int().min(0) });

export type InferencePayload = z.infer<typeof inferencePayload>;

export type Inbound =
  | { type: 'ack'; requestId?: string; payload: z.infer<typeof ackPayload> }
  | { type: 'error'; requestId?: string; payload: z.infer<typeof errorPayload> }
  | { type: 'inference'; requestId: string; payload: InferencePayload }
  | { type: 'warmup'; requestId?: string; payload: z.infer<typeof warmupPayload> }
  | { type: 'verify'; requestId?: string; payload: unknown }
  | { type: 'benchmark'; requestId?: string; payload: unknown }
  | { type: 'cancel'; requestId: string; reason?: string }
  | { type: 'resume'; requestId: string; lastSeq: number }
  /** A type this agent does not know: logged once per type, never answered (HUB-PROTOCOL.md, Envelope). */
  | { type: 'unknown'; messageType: string; requestId?: string }
  /** Hub notice (v0.5): validated and clamped by hub/notices.ts, never refused here (a notice is never answered). */
  | { type: 'notice'; requestId?: string; payload: unknown };

/** Why an inbound frame was refused, stable for logs and tests; the message says it for people. */
export type InboundErrorCode =
  /** The frame is not JSON. */
  | 'not_json'
  /** No `{type, request_id?, payload}` envelope. */
  | 'bad_envelope'
  /** The payload does not fit its type's schema. */
  | 'invalid_payload'
  /** An inference, cancel or resume that names no request. */
  | 'missing_request_id'
  /** An inference request nested deeper than MAX_REQUEST_DEPTH, or a frame deeper than the bounded reader's limit. */
  | 'too_deep'
  /** A frame over the bounded reader's size or key-count limit (src/core/http/bounded-json.ts). */
  | 'too_large';

/** Why an inbound frame was refused; `requestId` is set when the frame named one (so we can answer). */
export class InboundError extends Error {
  constructor(
    readonly code: InboundErrorCode,
    message: string,
    readonly requestId?: string,
    readonly messageType?: string,
    /** For a refused inference: whether it asked to stream (its answer goes on that result path). */
    readonly stream?: boolean,
    /** For invalid_payload: the first field at fault, dotted (`request.messages`), or `(payload)` for the whole. */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'InboundError';
  }
}

/** Nesting depth of a JSON value, measured without recursion (a hostile frame can nest deeply). */
export function jsonDepth(value: unknown, limit: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > limit) return max;
    for (const child of Object.values(v as Record<string, unknown>)) stack.push([child, d + 1]);
  }
  return max;
}

/** Deeper OpenAI bodies than this are refused: no real request nests so far. */
export const MAX_REQUEST_DEPTH = 64;

/** Parses and validates one text frame from the hub. Throws InboundError with a clear reason. */
export function parseInbound(text: string): Inbound {
  let raw: unknown;
  try {
    raw = parseJson(text, JSON_LIMITS.hub);
  } catch (e) {
    const code = (e as BoundedJsonError).code;
    if (code === 'not_json' || code === undefined) throw new InboundError('not_json', 'message is not valid JSON');
    // Refused unparsed: the request id and type, when the text names them, still let the hub be answered.
    const requestId = /"request_id"\s*:\s*"([\x21-\x7e]{1,128}?)"/.exec(text)?.[1];
    const type = /"type"\s*:\s*"([a-z_]{1,32})"/.exec(text)?.[1];
    const stream = type === 'inference' ? /"stream"\s*:\s*true/.test(text) : undefined;
    throw new InboundError(code === 'too_deep' ? 'too_deep' : 'too_large', `message refused unread: ${(e as Error).message}`, requestId, type, stream);
  }
  const env = envelope.safeParse(raw);
  if (!env.success) throw new InboundError('bad_envelope', `message has no valid envelope (${formatIssues(env.error, { root: '(message)' })})`);
  const { type, payload } = env.data;
  const p = (payload ?? {}) as Record<string, unknown>;
  const requestId = env.data.request_id ?? (typeof p.request_id === 'string' ? p.request_id : undefined);
  const stream =
    type === 'inference' ? p.stream === true || (typeof p.request === 'object' && (p.request as Record<string, unknown> | null)?.stream === true) : undefined;
  const check = <T>(schema: z.ZodType<T>): T => {
    const r = schema.safeParse(payload ?? {});
    if (!r.success) {
      const field = r.error.issues[0]?.path.map(String).join('.') || '(payload)';
      throw new InboundError('invalid_payload', `invalid ${type} payload: ${formatIssues(r.error, { root: '(payload)' })}`, requestId, type, stream, field);
    }
    return r.data;
  };
  switch (type) {
    case 'ack':
      return { type, requestId, payload: check(ackPayload) };
    case 'error':
      return { type, requestId, payload: check(errorPayload) };
    case 'inference': {
      if (!requestId) throw new InboundError('missing_request_id', 'inference without request_id', undefined, type);
      const inf = check(inferencePayload);
      if (jsonDepth(inf.request, MAX_REQUEST_DEPTH) > MAX_REQUEST_DEPTH) {
        throw new InboundError('too_deep', `invalid inference payload: request nests deeper than ${MAX_REQUEST_DEPTH} levels`, requestId, type, stream);
      }
      return { type, requestId, payload: inf };
    }
    case 'warmup':
      return { type, requestId, payload: check(warmupPayload) };
    case 'verify':
    case 'benchmark':
      return { type, requestId, payload: payload ?? {} };
    case 'cancel': {
      const c = check(cancelPayload.partial());
      const id = c.request_id ?? requestId;
      if (!id) throw new InboundError('missing_request_id', 'cancel without request_id', undefined, type);
      return { type, requestId: id, ...(c.reason !== undefined ? { reason: c.reason } : {}) };
    }
    case 'resume': {
      // Like cancel: the request id may be in the payload or at the top level.
      const r = check(resumePayload.partial({ request_id: true }));
      const id = r.request_id ?? requestId;
      if (!id) throw new InboundError('missing_request_id', 'resume without request_id', undefined, type);
      return { type, requestId: id, lastSeq: r.last_seq };
    }
    case 'notice':
      return { type, requestId, payload: payload ?? {} };
    default:
      return { type: 'unknown', messageType: type, ...(requestId !== undefined ? { requestId } : {}) };
  }
}

// ---- outbound ----
/** Go's ModelInfo: every field but model_id is omitempty, so an unknown one is left out, never "". */
export interface ModelHash {
  model_id: string;
  weight_hash?: string;
  /** Only with a weight_hash: a declared algorithm with an empty hash is never sent. */
  hash_algo?: string;
  format?: string;
  quantization?: string;
  /** v0.5: the context window the engine serves, when known (models.json override or detected). */
  context_length?: number;
  context_source?: 'override' | 'detected';
}

/** The quantizations a declaration may name (a closed set: anything else is left out, never guessed). */
export const DECLARED_QUANTIZATIONS = ['int4', 'int8', 'fp4', 'mxfp4', 'nvfp4', 'fp6', 'fp8', 'mxfp8', 'fp16', 'bf16', 'fp32'] as const;
export type DeclaredQuantization = (typeof DECLARED_QUANTIZATIONS)[number];
/** The engines a declaration may name (LM Studio and engines not known here are left out). */
export const DECLARED_ENGINES = ['vllm', 'sglang', 'llama.cpp', 'ollama', 'tgi'] as const;
export type DeclaredEngine = (typeof DECLARED_ENGINES)[number];

export interface DeclaredInputModality {
  type: 'text' | 'image' | 'audio';
  /** Only a window the engine states or the owner set; an unknown one is left out, never 0. */
  max_context_length?: { value: number; unit: 'token' };
}

export interface DeclaredOutputModality {
  type: 'text' | 'embeddings' | 'image' | 'transcription' | 'rerank';
  streaming?: boolean;
  supported_parameters?: string[];
}

export interface DeclaredCapacity {
  type: 'concurrency';
  unit: 'request';
  value: number;
}

/**
 * v0.5 `model_declarations[]` (schema "1"): what the marketplace routes by and then measures, so it is
 * conservative (model_declaration_test.go): a value this node cannot establish is left out, never guessed.
 */
export interface ModelDeclaration {
  schema_version: '1';
  model_id: string;
  /** Only with a window: override (models.json) or detected (an engine's max_model_len). */
  context_source?: 'override' | 'detected';
  weight_hash?: string;
  /** Only with a weight_hash. */
  hash_algo?: 'sha256';
  quantization?: DeclaredQuantization;
  engine?: DeclaredEngine;
  input_modalities: DeclaredInputModality[];
  output_modalities: DeclaredOutputModality[];
  capacity?: DeclaredCapacity[];
}

/** Go's HardwareInfo (inference_client.go): every field present, strings "" when unknown. */
export interface HubHardware {
  gpu_type: string;
  gpu_model: string;
  vram_gb: number;
  gpu_count: number;
  compute_capability: string;
  driver_version: string;
  cuda_version: string;
  serving_engine: ServingEngine;
}

/** The serving engines the Go provider names (detectServingEngine). */
export const SERVING_ENGINES = ['sglang', 'vllm', 'ollama', 'llamacpp', 'tgi', 'unknown'] as const;
export type ServingEngine = (typeof SERVING_ENGINES)[number];

export interface RegisterPayload {
  node_id: string;
  /** Deprecated in Go (= node_id) but still sent by it. */
  provider_id: string;
  worker_addr: string;
  owner_addr: string;
  token: string;
  models: string[];
  model_hashes: ModelHash[];
  /** v0.5: read by the hub in place of model_hashes when both are sent (hub_declaration_sync_test.go). */
  model_declarations: ModelDeclaration[];
  capabilities: string[];
  /** Omitted without a GPU, as Go's `*HardwareInfo` with omitempty. */
  hardware?: HubHardware;
  /** The provider dialect spoken (HUB_DIALECT_VERSION), as the hub reads v0.5's cp_version. */
  cp_version: string;
  /** Ours (harmless extras): this software and its version, the owner's name for this machine, the protocol revision. */
  client: string;
  client_version: string;
  node_name: string;
  protocol_version: string;
}

export type Health = 'healthy' | 'degraded' | 'unhealthy';

/** The heartbeat's light model list (Go's buildModelMetadata): no hash, only what the hub routes by. */
export type LightModelHash = Pick<ModelHash, 'model_id' | 'context_length' | 'context_source' | 'format' | 'quantization'>;

export interface HeartbeatPayload {
  node_id: string;
  /** Deprecated in Go (= node_id) but still sent by it, in the heartbeat too. */
  provider_id: string;
  timestamp: number;
  models: string[];
  model_health: Record<string, Health>;
  /** Go keys and units: percent utilisation, MiB, °C, W, request rates (HUB-PROTOCOL.md, heartbeat). */
  metrics: Record<string, number>;
  hardware?: HubHardware;
  /** The declarations of the last register, as sent then (cached, never re-read for a heartbeat). */
  model_declarations: ModelDeclaration[];
  /** The last register's model_hashes without their hashes (sendHeartbeat). */
  model_hashes: LightModelHash[];
}

export interface Outbound {
  type: string;
  request_id?: string;
  payload: Record<string, unknown>;
}

/** What a finished stream reports. Token counts only when the engine reported them (never estimates). */
export interface StreamEndFields {
  latencyMs: number;
  tokensIn?: number;
  tokensOut?: number;
  statusCode?: number;
  error?: string;
}

export const out = {
  register: (requestId: string, payload: RegisterPayload): Outbound => ({ type: 'register', request_id: requestId, payload: { ...payload } }),
  heartbeat: (payload: HeartbeatPayload): Outbound => ({ type: 'heartbeat', payload: { ...payload } }),
  /** A fresh request_id in the envelope and provider_id (= node_id) in the payload, as Go's sendModelHealthUpdate. */
  modelHealth: (nodeId: string, health: Record<string, Health>): Outbound => ({
    type: 'model_health_update',
    request_id: crypto.randomUUID(),
    payload: { node_id: nodeId, provider_id: nodeId, model_health: health, timestamp: Math.floor(Date.now() / 1000) },
  }),
  /** request_id in the envelope and the payload, as Go's sendStreamChunk. `seq` is ours (resume-v1). */
  streamChunk: (requestId: string, seq: number, chunk: unknown, done: boolean): Outbound => ({
    type: 'stream_chunk',
    request_id: requestId,
    payload: { request_id: requestId, chunk, done, seq },
  }),
  /**
   * A stream that fails before any data: this chunk goes first, then stream_end. The hub classifies a
   * failed stream from its first chunk (Go stream_error_test.go).
   */
  streamErrorChunk: (requestId: string, seq: number, error: string): Outbound => ({
    type: 'stream_chunk',
    request_id: requestId,
    payload: { request_id: requestId, chunk: null, done: true, error, seq },
  }),
  streamEnd: (requestId: string, seq: number, f: StreamEndFields): Outbound => ({
    type: 'stream_end',
    request_id: requestId,
    payload: {
      request_id: requestId,
      latency_ms: f.latencyMs,
      ...(f.tokensIn !== undefined ? { tokens_input: f.tokensIn } : {}),
      ...(f.tokensOut !== undefined ? { tokens_output: f.tokensOut } : {}),
      seq,
      ...(f.statusCode !== undefined ? { status_code: f.statusCode } : {}),
      ...(f.error !== undefined ? { error: f.error } : {}),
    },
  }),
  /** Non-streaming answer: an ack carrying the engine's JSON (Go's InferenceResponse); response null on error. */
  inferenceResult: (requestId: string, f: { response: unknown; statusCode: number; latencyMs: number; error?: string }): Outbound => ({
    type: 'ack',
    request_id: requestId,
    payload: {
      request_id: requestId,
      response: f.response,
      status_code: f.statusCode,
      latency_ms: f.latencyMs,
      ...(f.error !== undefined ? { error: f.error } : {}),
    },
  }),
  /**
   * A refused inference (invalid, unknown or unhealthy model, queue full, paused) on its result path:
   * for a stream the error chunk then stream_end with the status; otherwise an ack with response null.
   * Never an `error` frame: the Go hub reads refusals only there. `seq` numbers the messages (from 1).
   */
  refusal: (requestId: string, stream: boolean, statusCode: number, error: string, latencyMs = 0, firstSeq = 1): Outbound[] => {
    if (stream) return [out.streamErrorChunk(requestId, firstSeq, error), out.streamEnd(requestId, firstSeq + 1, { latencyMs, statusCode, error })];
    const ack = out.inferenceResult(requestId, { response: null, statusCode, latencyMs, error });
    return [{ ...ack, payload: { ...ack.payload, seq: firstSeq } }];
  },
  warmupResult: (requestId: string | undefined, f: { modelId: string; success: boolean; loadTimeMs: number; memoryMb: number; error?: string }): Outbound => ({
    type: 'ack',
    ...(requestId ? { request_id: requestId } : {}),
    payload: {
      ...(requestId ? { request_id: requestId } : {}),
      model_id: f.modelId,
      success: f.success,
      load_time_ms: f.loadTimeMs,
      memory_mb: Math.round(f.memoryMb),
      ...(f.error !== undefined ? { error: f.error } : {}),
    },
  }),
  error: (requestId: string | undefined, code: number, message: string): Outbound => ({
    type: 'error',
    ...(requestId ? { request_id: requestId } : {}),
    payload: { ...(requestId ? { request_id: requestId } : {}), code, message },
  }),
};

export function encode(msg: Outbound): string {
  return JSON.stringify(msg);
}

/** A message serialised once: the relay keeps it for resume and the link sends it as it is. */
export interface EncodedMessage {
  type: string;
  requestId?: string;
  seq: number;
  text: string;
  bytes: number;
  /** A data stream_chunk's chunk JSON (encodeStreamChunk): the resume buffer keeps only this and rebuilds the text. */
  chunk?: string;
}

/**
 * A data stream_chunk (done false) with its chunk given as JSON text (the engine's bytes, sse.ts
 * chunkJson): the text out.streamChunk + encodeOnce would give, without stringifying the chunk again.
 * `quotedId` is JSON.stringify(requestId), which a caller sending many chunks of one request makes once.
 */
export function encodeStreamChunk(requestId: string, seq: number, chunkJson: string, quotedId = JSON.stringify(requestId)): EncodedMessage {
  const id = quotedId;
  const text = `{"type":"stream_chunk","request_id":${id},"payload":{"request_id":${id},"chunk":${chunkJson},"done":false,"seq":${seq}}}`;
  return { type: 'stream_chunk', requestId, seq, text, bytes: Buffer.byteLength(text), chunk: chunkJson };
}

export function encodeOnce(msg: Outbound): EncodedMessage {
  const text = encode(msg);
  const requestId = (msg.payload.request_id as string | undefined) ?? msg.request_id;
  return { type: msg.type, ...(requestId ? { requestId } : {}), seq: Number(msg.payload.seq ?? 0), text, bytes: Buffer.byteLength(text) };
}
