// Every field of the network's demand table (GET {api}/stats/model-demand, public), as the Go provider's
// DemandEntry carries it (internal/market/demand.go): prices, who serves it, how much it is asked for and how
// that moves, the memory it needs (min_vram_gb means nothing unless vram_known), what the network estimates a
// provider earns (and a new entrant), the context and the prompt sizes. Each field is read on its own: a bad
// one drops only itself, never the model (platform/rates.ts refuses a whole answer over a bad price, as the
// ledger must; a recommendation can go on without one figure).
import { z } from 'zod';
import { apiBase, getJson } from '../platform/get-json';

export interface DemandEntry {
  modelId: string;
  modelName?: string;
  category?: string;
  tier?: string;
  inputPrice?: number;
  outputPrice?: number;
  providerInputPrice?: number;
  providerOutputPrice?: number;
  onlineProviders?: number;
  requests24h?: number;
  tokens24h?: number;
  revenue24h?: number;
  avgLatencyMs?: number;
  demandTrend?: string;
  demandChangePct?: number;
  minVramGb?: number;
  vramKnown: boolean;
  estDailyEarnings?: number;
  estEntrantDailyEarnings?: number;
  entrantBasis?: string;
  planCovered?: boolean;
  subscriptionShare?: number;
  longContextShare?: number;
  contextLength?: number;
  promptTokensP50?: number;
  promptTokensP95?: number;
  promptTokensMax?: number;
  totalTokensP95?: number;
}

const num = z.number().finite().min(0).max(1e15).optional().catch(undefined);
const signed = z.number().finite().min(-1e6).max(1e6).optional().catch(undefined);
const int = z.number().int().min(0).max(1e12).optional().catch(undefined);
const text = z.string().max(256).optional().catch(undefined);
const entry = z
  .object({
    model_id: z.string().min(1).max(256),
    model_name: text,
    category: text,
    tier: text,
    input_price: num,
    output_price: num,
    provider_input_price: num,
    provider_output_price: num,
    online_providers: int,
    requests_24h: int,
    tokens_24h: int,
    revenue_24h: num,
    avg_latency_ms: num,
    demand_trend: text,
    demand_change_pct: signed,
    min_vram_gb: num,
    vram_known: z.boolean().optional().catch(undefined),
    est_daily_earnings: num,
    est_entrant_daily_earnings: num,
    entrant_basis: text,
    plan_covered: z.boolean().optional().catch(undefined),
    subscription_share: num,
    long_context_share: num,
    context_length: int,
    prompt_tokens_p50: int,
    prompt_tokens_p95: int,
    prompt_tokens_max: int,
    total_tokens_p95: int,
  })
  .passthrough();
const answer = z.object({ code: z.number().optional(), data: z.object({ models: z.array(z.unknown()).max(20_000) }).passthrough() }).passthrough();

const KEYS: Array<[keyof DemandEntry, string]> = [
  ['modelName', 'model_name'],
  ['category', 'category'],
  ['tier', 'tier'],
  ['inputPrice', 'input_price'],
  ['outputPrice', 'output_price'],
  ['providerInputPrice', 'provider_input_price'],
  ['providerOutputPrice', 'provider_output_price'],
  ['onlineProviders', 'online_providers'],
  ['requests24h', 'requests_24h'],
  ['tokens24h', 'tokens_24h'],
  ['revenue24h', 'revenue_24h'],
  ['avgLatencyMs', 'avg_latency_ms'],
  ['demandTrend', 'demand_trend'],
  ['demandChangePct', 'demand_change_pct'],
  ['minVramGb', 'min_vram_gb'],
  ['estDailyEarnings', 'est_daily_earnings'],
  ['estEntrantDailyEarnings', 'est_entrant_daily_earnings'],
  ['entrantBasis', 'entrant_basis'],
  ['planCovered', 'plan_covered'],
  ['subscriptionShare', 'subscription_share'],
  ['longContextShare', 'long_context_share'],
  ['contextLength', 'context_length'],
  ['promptTokensP50', 'prompt_tokens_p50'],
  ['promptTokensP95', 'prompt_tokens_p95'],
  ['promptTokensMax', 'prompt_tokens_max'],
  ['totalTokensP95', 'total_tokens_p95'],
];

/** The demand table; entries without a model id are skipped and counted. */
export function parseDemand(json: unknown): { entries: DemandEntry[]; skipped: number } {
  const a = answer.safeParse(json);
  if (!a.success) throw new Error('the model-demand answer is not shaped {code, data: {models: [...]}}');
  if (a.data.code !== undefined && a.data.code !== 0) throw new Error(`the platform answered code ${a.data.code}`);
  const entries: DemandEntry[] = [];
  let skipped = 0;
  for (const raw of a.data.data.models) {
    const e = entry.safeParse(raw);
    if (!e.success) {
      skipped++;
      continue;
    }
    const src = e.data as Record<string, unknown>;
    const out: DemandEntry = { modelId: e.data.model_id, vramKnown: e.data.vram_known === true };
    for (const [k, wire] of KEYS) if (src[wire] !== undefined) (out as unknown as Record<string, unknown>)[k] = src[wire];
    entries.push(out);
  }
  return { entries, skipped };
}

export async function fetchDemand(serviceUrl: string): Promise<{ entries: DemandEntry[]; skipped: number }> {
  const url = `${apiBase(serviceUrl)}/stats/model-demand`;
  const r = await getJson(url, { timeoutMs: 15_000 });
  if (!r.ok) throw new Error(`could not read the network's model demand: ${r.error}`);
  return parseDemand(r.json);
}

/**
 * What a model would earn a day here, in USD: the network's estimate for a new entrant when it gives one (this
 * node would be one), else its per-provider estimate shared with one more provider. Undefined: no figure.
 */
export function earnHere(d: DemandEntry | undefined): number | undefined {
  if (!d) return undefined;
  if (d.estEntrantDailyEarnings !== undefined) return d.estEntrantDailyEarnings;
  if (d.estDailyEarnings !== undefined) return (d.estDailyEarnings * (d.onlineProviders ?? 0)) / ((d.onlineProviders ?? 0) + 1);
  return undefined;
}
