// stream-v1 (seed 001 with seed 003's events): the client messages as zod schemas, and the
// compatibility block `started` carries for feature detection. Every message is a flat JSON object
// with `type`; fields a newer client adds are ignored (compatible within a major version).
import { z } from 'zod';
import { chatMessageSchema, requestIdSchema, samplingParamsSchema } from './request-schema';

/** Subprotocols this server speaks, newest first. The server picks the newest one the client offers. */
export const STREAM_PROTOCOLS = ['stream-v1'] as const;
export const STREAM_PROTOCOL_VERSION = '1.1';

export const startSchema = z
  .object({
    type: z.literal('start'),
    request_id: requestIdSchema.optional(),
    model: z.string().min(1).max(256).optional(),
    prompt: z
      .string()
      .max(4 * 1024 * 1024)
      .optional(),
    messages: z.array(chatMessageSchema).min(1).max(4096).optional(),
    params: samplingParamsSchema.optional(),
    resume_token: z.string().max(4096).nullable().optional(),
  })
  .superRefine((m, ctx) => {
    if (m.resume_token) return;
    if (!m.request_id) ctx.addIssue({ code: 'custom', path: ['request_id'], message: 'required (a client-generated UUID) unless resume_token is given' });
    if (!m.model) ctx.addIssue({ code: 'custom', path: ['model'], message: 'required unless resume_token is given' });
    if ((m.prompt === undefined) === (m.messages === undefined))
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'give exactly one of prompt or messages' });
  });
export type StartMessage = z.infer<typeof startSchema>;

export const ackSchema = z.object({ type: z.literal('ack'), request_id: requestIdSchema, seq: z.number().int().min(0) });
export const cancelSchema = z.object({ type: z.literal('cancel'), request_id: requestIdSchema });
export const describeFleetSchema = z.object({ type: z.literal('describe_fleet'), request_id: requestIdSchema.optional() });
export const authSchema = z
  .object({ type: z.literal('auth'), token: z.string().min(1).max(512).optional(), api_key: z.string().min(1).max(512).optional() })
  .refine((m) => m.token ?? m.api_key, { message: 'give the key as "token" (or "api_key")', path: ['token'] });

export const CLIENT_TYPES = ['auth', 'start', 'ack', 'cancel', 'describe_fleet'] as const;

export interface Compatibility {
  protocol: string;
  version: string;
  protocols: string[];
  features: string[];
  window: { bytes: number; messages: number };
  resume_ttl_ms: number;
  error_kinds: string[];
}

export function compatibility(window: { bytes: number; messages: number }, resumeTtlMs: number): Compatibility {
  return {
    protocol: 'stream-v1',
    version: STREAM_PROTOCOL_VERSION,
    protocols: [...STREAM_PROTOCOLS],
    features: ['resume', 'ack_window', 'cancel', 'heartbeat', 'quota', 'accepted', 'token_ids', 'describe_fleet', 'auth_message', 'reasoning_chunk'],
    window,
    resume_ttl_ms: resumeTtlMs,
    error_kinds: ['invalid', 'model_not_loaded', 'rejected', 'cancelled', 'internal'],
  };
}

/**
 * Picks the subprotocol to answer with: the newest stream-vN both sides know; 'access_token' when the
 * client only used the subprotocol to carry its key; none when it offered nothing. `refuse` says why
 * the offered versions cannot be served.
 */
/** Why a /v1/stream handshake was refused: a stream-v version this gateway does not speak, or another subprotocol. */
export type NegotiationRefusalCode = 'unsupported_version' | 'unknown_subprotocol';

export function negotiate(offered: string[]): { protocol?: string; refuse?: string; code?: NegotiationRefusalCode } {
  const versions = offered.filter((p) => /^stream-v\d+$/.test(p));
  if (versions.length > 0) {
    const pick = STREAM_PROTOCOLS.find((p) => versions.includes(p));
    if (!pick) {
      return {
        code: 'unsupported_version',
        refuse: `This gateway speaks ${STREAM_PROTOCOLS.join(', ')}; the client offered ${versions.join(', ')}. Connect with Sec-WebSocket-Protocol: ${STREAM_PROTOCOLS[0]}.`,
      };
    }
    return { protocol: pick };
  }
  if (offered.includes('access_token')) return { protocol: 'access_token' };
  if (offered.length > 0)
    return { code: 'unknown_subprotocol', refuse: `Unknown subprotocol ${offered.join(', ')}. Use ${STREAM_PROTOCOLS[0]} (and optionally access_token, KEY).` };
  return {};
}
