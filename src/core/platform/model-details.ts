// The network's own record of each model this provider offers or has offered (the Go provider's
// platform_data.go, HUB-PROTOCOL.md): GET {api}/provider/me → {id}, then GET
// {api}/providers/{id}/models/details → {models: [{model_id, offered, available, capacity,
// recent_success_count, recent_failure_count, dispatch_failures, throughput_tok_per_s, last_request_at, …}]},
// possibly wrapped in {data: …}, with the provider key. What the platform routes on: why a model gets no
// traffic. Validated and bounded; the provider id is kept once known (it never changes for a key).
import { z } from 'zod';
import { apiBase, getJson, type GetJsonOptions } from './get-json';
import type { Fetched } from './cached-figures';
import { formatIssues } from '../../shared/zod-issues';
import type { NetworkModelFacts } from '../../shared/views/usage';

/** One model as the platform holds it (camelCase; the wire's names on NetworkModelFacts), with what the console does not show. */
export interface NetworkModelRecord extends NetworkModelFacts {
  totalRequests: number;
  contextLength?: number;
  inputPrice?: number;
  outputPrice?: number;
}

const MAX_MODELS = 500;
const n = z.number().finite().nonnegative().max(1e15);
const row = z
  .object({
    model_id: z.string().min(1).max(256),
    offered: z.boolean().default(false),
    available: n.default(0),
    capacity: n.default(0),
    recent_success_count: n.default(0),
    recent_failure_count: n.default(0),
    dispatch_failures: n.default(0),
    throughput_tok_per_s: n.default(0),
    total_requests: n.default(0),
    last_request_at: z.string().max(64).nullable().optional(),
    context_length: n.optional(),
    input_price: n.optional(),
    output_price: n.optional(),
  })
  .passthrough();
const details = z.object({ models: z.array(row).max(MAX_MODELS).nullable().default([]) }).passthrough();
const me = z.object({ id: z.union([z.string().min(1).max(128), z.number().int().nonnegative()]) }).passthrough();

/** The body, or the object under `data` (the platform wraps some answers). */
function unwrap(json: unknown): unknown {
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const data = (json as Record<string, unknown>).data;
    if (data && typeof data === 'object' && !Array.isArray(data)) return data;
  }
  return json;
}

export function parseModelDetails(json: unknown): Fetched<NetworkModelRecord[]> {
  const p = details.safeParse(unwrap(json));
  if (!p.success) return { ok: false, error: `the platform's model details are malformed (${formatIssues(p.error, { limit: 1 }) || 'unexpected shape'})` };
  return {
    ok: true,
    value: (p.data.models ?? []).map((m) => {
      const at = m.last_request_at ? Date.parse(m.last_request_at) : NaN;
      return {
        modelId: m.model_id,
        offered: m.offered,
        available: m.available,
        capacity: m.capacity,
        recentSuccesses: m.recent_success_count,
        recentFailures: m.recent_failure_count,
        dispatchFailures: m.dispatch_failures,
        throughput: m.throughput_tok_per_s,
        totalRequests: m.total_requests,
        ...(Number.isFinite(at) ? { lastRequestAt: at } : {}),
        ...(m.context_length !== undefined ? { contextLength: m.context_length } : {}),
        ...(m.input_price !== undefined ? { inputPrice: m.input_price } : {}),
        ...(m.output_price !== undefined ? { outputPrice: m.output_price } : {}),
      };
    }),
  };
}

export function parseProviderId(json: unknown): Fetched<string> {
  const p = me.safeParse(unwrap(json));
  if (!p.success) return { ok: false, error: 'the platform did not say which provider this key is (GET /provider/me has no id)' };
  const id = String(p.data.id);
  return /^[A-Za-z0-9_.:-]+$/.test(id) ? { ok: true, value: id } : { ok: false, error: 'the provider id from GET /provider/me is not one we can put in a URL' };
}

/** Fetches the platform's model records (the provider id once, then the details). */
export class ModelDetailsReader {
  private id?: string;

  constructor(private readonly o: { serviceUrl: () => string; providerKey: () => string; timeoutMs?: number }) {}

  async fetch(): Promise<Fetched<NetworkModelRecord[]>> {
    const key = this.o.providerKey();
    if (!key) return { ok: false, error: 'no provider key is configured' };
    const api = apiBase(this.o.serviceUrl());
    const opts: GetJsonOptions = { bearer: key, ...(this.o.timeoutMs !== undefined ? { timeoutMs: this.o.timeoutMs } : {}) };
    if (!this.id) {
      const r = await getJson(`${api}/provider/me`, opts);
      if (!r.ok) return refused(r);
      const id = parseProviderId(r.json);
      if (!id.ok) return id;
      this.id = id.value;
    }
    const r = await getJson(`${api}/providers/${encodeURIComponent(this.id)}/models/details`, opts);
    if (!r.ok) return refused(r);
    return parseModelDetails(r.json);
  }
}

function refused(r: { error: string; status?: number }): { ok: false; error: string } {
  return { ok: false, error: r.status === 401 || r.status === 403 ? `the platform refused the provider key (HTTP ${r.status})` : r.error };
}
