// What the network pays per model: GET {api}/stats/model-demand (public) →
// {code: 0, data: {models: [{model_id, input_price, output_price, provider_input_price?,
// provider_output_price?, tier, min_vram_gb?}]}}, USD per 1M tokens; min_vram_gb (GB, 0 = not given) is
// what the Go provider's recommend-models compares with the GPUs' total memory. The payout is provider_*_price when present,
// else the list price (model_price.go). Cached 5 minutes; after a failure retried in 30 s; the last
// good rates stay in use (marked stale) while the platform is down, slow, says code != 0, sends
// something malformed or a negative or absurd rate — then the whole answer is refused.
import { z } from 'zod';
import type { NetworkRateView } from '../../shared/views/usage';
import type { Rate } from '../ledger/price-book';
import { CachedFigures, cacheKnobs, type CachedView, type Fetched, type PlatformFiguresOptions } from './cached-figures';
import { apiBase, getJson } from './get-json';
import { formatIssues } from '../../shared/zod-issues';

/** Above this (USD per 1M tokens) a rate is taken as a platform error, not a price. */
export const MAX_RATE_PER_M = 1000;
export const RATES_TTL_MS = 5 * 60_000;

/** One model's payout rate (the bridge's type is its one home). */
export type NetworkRate = NetworkRateView;

const price = z.number().finite();
const entry = z
  .object({
    model_id: z.string().min(1).max(256),
    input_price: price,
    output_price: price,
    provider_input_price: price.nullable().optional(),
    provider_output_price: price.nullable().optional(),
    tier: z.string().max(64).nullable().optional(),
    // Not a price: a bad figure here drops only itself (the fit then says "size unknown").
    min_vram_gb: z.number().int().positive().max(100_000).optional().catch(undefined),
  })
  .passthrough();
const answer = z.object({ code: z.number(), message: z.string().optional(), msg: z.string().optional(), data: z.unknown().optional() }).passthrough();
const data = z.object({ models: z.array(entry).max(20_000) }).passthrough();

/** Checks one platform answer; an error in words when any part of it is unusable. */
export function parseModelDemand(json: unknown): Fetched<NetworkRate[]> {
  const a = answer.safeParse(json);
  if (!a.success) return { ok: false, error: 'the model-demand answer is not shaped {code, data: {models: [...]}}' };
  if (a.data.code !== 0)
    return {
      ok: false,
      error: `the platform answered code ${a.data.code}${(a.data.message ?? a.data.msg) ? ` (${String(a.data.message ?? a.data.msg).slice(0, 200)})` : ''}`,
    };
  const d = data.safeParse(a.data.data);
  if (!d.success) {
    return { ok: false, error: `the model-demand answer is malformed (${formatIssues(d.error, { limit: 1 }) || 'no models list'})` };
  }
  const out: NetworkRate[] = [];
  for (const m of d.data.models) {
    const r: NetworkRate = {
      modelId: m.model_id,
      inputPerM: m.provider_input_price ?? m.input_price,
      outputPerM: m.provider_output_price ?? m.output_price,
      listInputPerM: m.input_price,
      listOutputPerM: m.output_price,
      tier: m.tier ?? '',
      ...(m.min_vram_gb !== undefined ? { minVramGb: m.min_vram_gb } : {}),
    };
    for (const v of [r.inputPerM, r.outputPerM, r.listInputPerM, r.listOutputPerM]) {
      if (v < 0 || v > MAX_RATE_PER_M)
        return {
          ok: false,
          error: `the platform sent a rate of ${v} USD per 1M tokens for ${m.model_id}, which cannot be right (expected 0 to ${MAX_RATE_PER_M}); all rates in that answer were refused`,
        };
    }
    out.push(r);
  }
  return { ok: true, value: out };
}

export type NetworkRatesOptions = PlatformFiguresOptions;

export type RatesView = CachedView<NetworkRate[]>;

export class NetworkRates {
  readonly cache: CachedFigures<NetworkRate[]>;

  constructor(o: NetworkRatesOptions) {
    this.cache = new CachedFigures<NetworkRate[]>({
      ...cacheKnobs(o, 'Network rates (model-demand)', RATES_TTL_MS),
      fetch: async () => {
        const r = await getJson(`${apiBase(o.serviceUrl())}/stats/model-demand`, o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {});
        return r.ok ? parseModelDemand(r.json) : r;
      },
      revive: (json) => {
        const r = parseModelDemand({ code: 0, data: { models: Array.isArray(json) ? json.map(toWire) : null } });
        return r.ok ? r.value : null;
      },
    });
  }

  view(): RatesView {
    return this.cache.view();
  }

  get(force = false): Promise<RatesView> {
    return this.cache.get(force);
  }

  /** model id → payout rate, from the last good answer. */
  rateMap(): Map<string, Rate> {
    return new Map((this.cache.view().value ?? []).map((r) => [r.modelId, { inputPerM: r.inputPerM, outputPerM: r.outputPerM }]));
  }
}

function toWire(r: unknown): unknown {
  const v = r as Partial<NetworkRate> | null;
  if (!v || typeof v !== 'object') return v;
  return {
    model_id: v.modelId,
    input_price: v.listInputPerM,
    output_price: v.listOutputPerM,
    provider_input_price: v.inputPerM,
    provider_output_price: v.outputPerM,
    tier: v.tier,
    min_vram_gb: v.minVramGb,
  };
}
