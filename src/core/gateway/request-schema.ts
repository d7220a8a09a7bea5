// Pieces of client requests shared by every dialect: chat messages, sampling parameters (an allowlist,
// so a typo is reported instead of silently ignored), request ids, and readable validation errors.
import { z } from 'zod';
import { formatIssues } from '../../shared/zod-issues';
import { JSON_LIMITS, readJson, type JsonRefusalCode } from '../http/bounded-json';

export const requestIdSchema = z.string().regex(/^[\x21-\x7e]{1,128}$/, 'use 1-128 printable ASCII characters without spaces (a UUID is best)');

export const chatMessageSchema = z.looseObject({
  role: z.string().min(1).max(64),
  content: z.union([z.string(), z.array(z.record(z.string(), z.unknown())), z.null()]),
});

export const samplingParamsSchema = z
  .object({
    max_tokens: z.number().int().min(1).max(1_000_000),
    max_completion_tokens: z.number().int().min(1).max(1_000_000),
    temperature: z.number().min(0).max(2),
    top_p: z.number().gt(0).max(1),
    top_k: z.number().int().min(-1),
    min_p: z.number().min(0).max(1),
    stop: z.union([z.string(), z.array(z.string()).max(16)]),
    seed: z.number().int(),
    presence_penalty: z.number().min(-2).max(2),
    frequency_penalty: z.number().min(-2).max(2),
    repetition_penalty: z.number().gt(0).max(10),
    logprobs: z.boolean(),
    top_logprobs: z.number().int().min(0).max(20),
    return_token_ids: z.boolean(),
  })
  .partial()
  .strict();

export type SamplingParams = z.infer<typeof samplingParamsSchema>;
export const SAMPLING_KEYS = Object.keys(samplingParamsSchema.shape) as Array<keyof SamplingParams>;

/** "params.temperature: Too big: expected number to be <=2; model: …" */
export function describeIssues(err: z.ZodError, prefix = ''): string {
  return formatIssues(err, {
    prefix,
    limit: 5,
    message: (i) => (i.code === 'unrecognized_keys' ? `${i.message}; supported: ${SAMPLING_KEYS.join(', ')}` : i.message),
  });
}

export type ParsedJson = { ok: true; value: Record<string, unknown> } | { ok: false; message: string; code?: JsonRefusalCode };

/** A WebSocket message as a JSON object with a string `type`, or why not. */
export function parseClientMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): ParsedJson {
  if (isBinary) return { ok: false, message: 'Binary frames are not understood; send each message as one JSON text frame.' };
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  const read = readJson(text, JSON_LIMITS.gateway);
  if (!read.ok) {
    return {
      ok: false,
      code: read.code,
      message:
        read.code === 'not_json' ? `The message is ${read.message}. Send one JSON object per message.` : `The message was refused unread: ${read.message}.`,
    };
  }
  const value = read.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'Each message must be one JSON object with a "type" field (not an array or a bare value).' };
  }
  const v = value as Record<string, unknown>;
  if (typeof v.type !== 'string' || v.type === '')
    return { ok: false, message: 'The message has no "type" field; every message is a JSON object like {"type": "...", ...}.' };
  return { ok: true, value: v };
}

/** The request_id of a message if it has a usable one (to address an error to it). */
export function requestIdOf(v: Record<string, unknown>): string | undefined {
  const r = requestIdSchema.safeParse(v.request_id);
  return r.success ? r.data : undefined;
}
