// Validation of a finished request before it is stored, and the row <-> UsageRecord mapping.
import { z } from 'zod';
import type { UsageRecord } from '../../shared/types';

const count = z.number().int().nonnegative();
const epochMs = z.number().int().nonnegative();
const ms = z.number().nonnegative();

/** Longest error text kept per row; engines sometimes return whole HTML pages. */
export const MAX_ERROR_CHARS = 2000;

export const usageRecordSchema = z.object({
  requestId: z.string().min(1).max(256),
  source: z.enum(['hub', 'local']),
  model: z.string().min(1).max(256),
  endpoint: z.string().max(2048),
  startedAt: epochMs,
  finishedAt: epochMs,
  tokensIn: count,
  tokensOut: count,
  estimated: z.boolean(),
  latencyMs: ms,
  ttftMs: ms.nullable(),
  tokensPerSecond: ms.nullable(),
  status: z.enum(['ok', 'error', 'cancelled', 'rejected']),
  statusCode: z.number().int().min(0).max(999).nullable(),
  error: z
    .string()
    .nullable()
    .transform((e) => (e !== null && e.length > MAX_ERROR_CHARS ? `${e.slice(0, MAX_ERROR_CHARS)}…` : e)),
  energyWh: z.number().nonnegative().finite().nullable().optional(),
  awaitingHub: z.boolean().optional(),
});

export type ValidRecord = z.infer<typeof usageRecordSchema>;

/** A readable reason why a record was refused, or the clean record. */
export function validateRecord(input: unknown): { ok: true; record: ValidRecord } | { ok: false; reason: string } {
  const parsed = usageRecordSchema.safeParse(input);
  if (parsed.success) return { ok: true, record: parsed.data };
  const reason = parsed.error.issues.map((i) => `${i.path.join('.') || 'record'}: ${i.message}`).join('; ');
  return { ok: false, reason };
}

/** Columns of `usage` as read back by queries. */
export interface UsageRow {
  request_id: string;
  source: string;
  model: string;
  endpoint: string;
  started_at: number;
  finished_at: number;
  tokens_in: number;
  tokens_out: number;
  estimated: number;
  latency_ms: number;
  ttft_ms: number | null;
  tokens_per_second: number | null;
  status: string;
  status_code: number | null;
  error: string | null;
}

export const USAGE_COLUMNS =
  'request_id, source, model, endpoint, started_at, finished_at, tokens_in, tokens_out, estimated, latency_ms, ttft_ms, tokens_per_second, status, status_code, error';

export function rowToRecord(r: UsageRow): UsageRecord {
  return {
    requestId: r.request_id,
    source: r.source === 'local' ? 'local' : 'hub',
    model: r.model,
    endpoint: r.endpoint,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    tokensIn: r.tokens_in,
    tokensOut: r.tokens_out,
    estimated: r.estimated !== 0,
    latencyMs: r.latency_ms,
    ttftMs: r.ttft_ms,
    tokensPerSecond: r.tokens_per_second,
    status: r.status === 'ok' || r.status === 'error' || r.status === 'cancelled' || r.status === 'rejected' ? r.status : 'error',
    statusCode: r.status_code,
    error: r.error,
  };
}
