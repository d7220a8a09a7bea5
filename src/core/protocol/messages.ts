// Swan Inference provider protocol (seed 000 + the fields DESIGN.md lists from the Go provider).
// Inbound messages are schema-checked here; outbound ones are typed builders.
import { z } from 'zod';

export const PROTOCOL_VERSION = '1';
/** What register advertises; hubs ignore capabilities they do not know. */
export const CAPABILITIES = ['stream', 'warmup', 'verify', 'benchmark', 'resume-v1', 'cancel'] as const;
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
  .passthrough()
  .refine((r) => r.messages !== undefined || r.prompt !== undefined, 'request needs "messages" or "prompt"');

export const inferencePayload = z.object({
  endpoint_id: z.string().max(256).optional(),
  model_id: z.string().min(1).max(256),
  stream: z.boolean().optional(),
  request: openAiRequest,
});

export const warmupPayload = z.object({
  model_id: z.string().min(1).max(256),
  warmup_type: z.string().max(64).optional(),
});

export const ackPayload = z
  .object({ request_id: z.string().optional(), success: z.boolean().optional(), message: z.string().optional() })
  .passthrough();

export const errorPayload = z
  .object({ request_id: z.string().optional(), code: z.union([z.number(), z.string()]).optional(), message: z.string().optional() })
  .passthrough();

export const cancelPayload = z.object({ request_id: z.string().min(1).max(256) });
export const resumePayload = z.object({ request_id: z.string().min(1).max(256), last_seq: z.number().int().min(0) });

export type InferencePayload = z.infer<typeof inferencePayload>;

export type Inbound =
  | { type: 'ack'; requestId?: string; payload: z.infer<typeof ackPayload> }
  | { type: 'error'; requestId?: string; payload: z.infer<typeof errorPayload> }
  | { type: 'inference'; requestId: string; payload: InferencePayload }
  | { type: 'warmup'; requestId?: string; payload: z.infer<typeof warmupPayload> }
  | { type: 'verify'; requestId?: string; payload: unknown }
  | { type: 'benchmark'; requestId?: string; payload: unknown }
  | { type: 'cancel'; requestId: string }
  | { type: 'resume'; requestId: string; lastSeq: number }
  /** Hub notice (v0.5): validated and clamped by hub/notices.ts, never refused here (a notice is never answered). */
  | { type: 'notice'; requestId?: string; payload: unknown };

/** Why an inbound frame was refused; `requestId` is set when the frame named one (so we can answer). */
export class InboundError extends Error {
  constructor(
    message: string,
    readonly requestId?: string,
    readonly messageType?: string,
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

function issues(err: z.ZodError, root = '(payload)'): string {
  return err.issues.map((i) => `${i.path.join('.') || root}: ${i.message}`).join('; ');
}

/** Parses and validates one text frame from the hub. Throws InboundError with a clear reason. */
export function parseInbound(text: string): Inbound {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InboundError('message is not valid JSON');
  }
  const env = envelope.safeParse(raw);
  if (!env.success) throw new InboundError(`message has no valid envelope (${issues(env.error, '(message)')})`);
  const { type, payload } = env.data;
  const p = (payload ?? {}) as Record<string, unknown>;
  const requestId = env.data.request_id ?? (typeof p.request_id === 'string' ? p.request_id : undefined);
  const check = <T>(schema: z.ZodType<T>): T => {
    const r = schema.safeParse(payload ?? {});
    if (!r.success) throw new InboundError(`invalid ${type} payload: ${issues(r.error)}`, requestId, type);
    return r.data;
  };
  switch (type) {
    case 'ack':
      return { type, requestId, payload: check(ackPayload) };
    case 'error':
      return { type, requestId, payload: check(errorPayload) };
    case 'inference': {
      if (!requestId) throw new InboundError('inference without request_id', undefined, type);
      const inf = check(inferencePayload);
      if (jsonDepth(inf.request, MAX_REQUEST_DEPTH) > MAX_REQUEST_DEPTH) {
        throw new InboundError(`invalid inference payload: request nests deeper than ${MAX_REQUEST_DEPTH} levels`, requestId, type);
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
      if (!id) throw new InboundError('cancel without request_id', undefined, type);
      return { type, requestId: id };
    }
    case 'resume': {
      // Like cancel: the request id may be in the payload or at the top level.
      const r = check(resumePayload.partial({ request_id: true }));
      const id = r.request_id ?? requestId;
      if (!id) throw new InboundError('resume without request_id', undefined, type);
      return { type, requestId: id, lastSeq: r.last_seq };
    }
    case 'notice':
      return { type, requestId, payload: payload ?? {} };
    default:
      throw new InboundError(`unknown message type "${type.slice(0, 64)}"`, requestId, type);
  }
}

// ---- outbound ----
export interface ModelHash {
  model_id: string;
  weight_hash: string;
  hash_algo: string;
  format: string;
  quantization: string;
}

export interface RegisterPayload {
  node_id: string;
  provider_id: string;
  node_name: string;
  token: string;
  models: string[];
  model_hashes: ModelHash[];
  capabilities: string[];
  protocol_version: string;
  hardware: Record<string, unknown>;
}

export type Health = 'healthy' | 'degraded' | 'unhealthy';

export interface HeartbeatPayload {
  node_id: string;
  timestamp: number;
  models: string[];
  model_health: Record<string, Health>;
  metrics: Record<string, number>;
}

export interface Outbound {
  type: string;
  request_id?: string;
  payload: Record<string, unknown>;
}

export const out = {
  register: (requestId: string, payload: RegisterPayload): Outbound => ({ type: 'register', request_id: requestId, payload: { ...payload } }),
  heartbeat: (payload: HeartbeatPayload): Outbound => ({ type: 'heartbeat', payload: { ...payload } }),
  modelHealth: (nodeId: string, health: Record<string, Health>): Outbound => ({
    type: 'model_health_update',
    payload: { node_id: nodeId, model_health: health, timestamp: Math.floor(Date.now() / 1000) },
  }),
  streamChunk: (requestId: string, seq: number, chunk: unknown, done: boolean): Outbound => ({
    type: 'stream_chunk',
    payload: { request_id: requestId, chunk, done, seq },
  }),
  streamEnd: (
    requestId: string,
    seq: number,
    f: { latencyMs: number; tokensIn: number; tokensOut: number; statusCode?: number; error?: string; estimated?: boolean },
  ): Outbound => ({
    type: 'stream_end',
    payload: {
      request_id: requestId,
      latency_ms: f.latencyMs,
      tokens_input: f.tokensIn,
      tokens_output: f.tokensOut,
      seq,
      ...(f.statusCode !== undefined ? { status_code: f.statusCode } : {}),
      ...(f.error !== undefined ? { error: f.error } : {}),
      ...(f.estimated ? { tokens_estimated: true } : {}),
    },
  }),
  /** Non-streaming answer: an ack carrying the engine's JSON (Go provider form). */
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
  warmupResult: (
    requestId: string | undefined,
    f: { modelId: string; success: boolean; loadTimeMs: number; memoryMb: number; error?: string },
  ): Outbound => ({
    type: 'ack',
    ...(requestId ? { request_id: requestId } : {}),
    payload: {
      ...(requestId ? { request_id: requestId } : {}),
      model_id: f.modelId,
      success: f.success,
      load_time_ms: f.loadTimeMs,
      memory_mb: f.memoryMb,
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
}

export function encodeOnce(msg: Outbound): EncodedMessage {
  const text = encode(msg);
  const requestId = (msg.payload.request_id as string | undefined) ?? msg.request_id;
  return { type: msg.type, ...(requestId ? { requestId } : {}), seq: Number(msg.payload.seq ?? 0), text, bytes: Buffer.byteLength(text) };
}
