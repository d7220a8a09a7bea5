// The platform's own record of this provider: GET {api}/provider/me/stats with the provider key as a
// Bearer token → {total_inferences, successful_inferences, failed_inferences, total_input_tokens,
// total_output_tokens, total_tokens, total_earnings_usdc, uptime_7d_percent, last_connected},
// possibly wrapped in {data: …} (provider_stats.go). Cached 2 minutes, retried 30 s after a failure;
// the last good figures stay (marked stale) while the platform cannot be read.
import { z } from 'zod';
import type { PlatformStatsView } from '../../shared/views/usage';
import { CachedFigures, cacheKnobs, type CachedView, type Fetched, type PlatformFiguresOptions } from './cached-figures';
import { apiBase, getJson } from './get-json';
import { formatIssues } from '../../shared/zod-issues';

export const STATS_TTL_MS = 2 * 60_000;

/** The platform's record (the bridge's type is its one home). */
export type PlatformStats = PlatformStatsView;

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const stats = z
  .object({
    total_inferences: count.default(0),
    successful_inferences: count.default(0),
    failed_inferences: count.default(0),
    total_input_tokens: count.default(0),
    total_output_tokens: count.default(0),
    total_tokens: count.default(0),
    total_earnings_usdc: z.number().finite().nonnegative().max(1e12).default(0),
    uptime_7d_percent: z.number().finite().min(0).max(100).default(0),
    last_connected: z.string().max(64).nullable().default(''),
  })
  .passthrough();

export function parseProviderStats(json: unknown): Fetched<PlatformStats> {
  if (!json || typeof json !== 'object' || Array.isArray(json)) return { ok: false, error: 'the provider stats answer is not a JSON object' };
  const obj = json as Record<string, unknown>;
  if (typeof obj.code === 'number' && obj.code !== 0) return { ok: false, error: `the platform answered code ${obj.code}` };
  const body = obj.data !== undefined && obj.data !== null ? obj.data : obj;
  const p = stats.safeParse(body);
  if (!p.success) {
    return { ok: false, error: `the provider stats answer is malformed (${formatIssues(p.error, { limit: 1 }) || 'unexpected shape'})` };
  }
  const s = p.data;
  return {
    ok: true,
    value: {
      totalInferences: s.total_inferences,
      successfulInferences: s.successful_inferences,
      failedInferences: s.failed_inferences,
      totalInputTokens: s.total_input_tokens,
      totalOutputTokens: s.total_output_tokens,
      totalTokens: s.total_tokens,
      totalEarningsUsd: s.total_earnings_usdc,
      uptime7dPercent: s.uptime_7d_percent,
      lastConnected: s.last_connected ?? '',
    },
  };
}

export interface ProviderStatsOptions extends PlatformFiguresOptions {
  providerKey: () => string;
}

export type StatsView = CachedView<PlatformStats>;

export class ProviderStatsClient {
  readonly cache: CachedFigures<PlatformStats>;

  constructor(o: ProviderStatsOptions) {
    this.cache = new CachedFigures<PlatformStats>({
      ...cacheKnobs(o, 'The platform record (provider/me/stats)', STATS_TTL_MS),
      fetch: async () => {
        const key = o.providerKey();
        if (!key) return { ok: false, error: 'no provider key is configured' };
        const r = await getJson(`${apiBase(o.serviceUrl())}/provider/me/stats`, {
          bearer: key,
          ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        });
        if (!r.ok) return r.status === 401 || r.status === 403 ? { ok: false, error: `the platform refused the provider key (HTTP ${r.status})` } : r;
        return parseProviderStats(r.json);
      },
      revive: (json) => {
        const v = json as Partial<PlatformStats> | null;
        if (!v || typeof v !== 'object') return null;
        const r = parseProviderStats({
          total_inferences: v.totalInferences,
          successful_inferences: v.successfulInferences,
          failed_inferences: v.failedInferences,
          total_input_tokens: v.totalInputTokens,
          total_output_tokens: v.totalOutputTokens,
          total_tokens: v.totalTokens,
          total_earnings_usdc: v.totalEarningsUsd,
          uptime_7d_percent: v.uptime7dPercent,
          last_connected: v.lastConnected,
        });
        return r.ok ? r.value : null;
      },
    });
  }

  view(): StatsView {
    return this.cache.view();
  }

  get(force = false): Promise<StatsView> {
    return this.cache.get(force);
  }
}
