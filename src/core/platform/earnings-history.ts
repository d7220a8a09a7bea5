// The platform's settled earnings of this provider over time (the Go provider's platform_data.go,
// HUB-PROTOCOL.md): GET {api}/provider/me/earnings/history?duration=24h|7d|30d&bucket=1h|1d with the
// provider key → {points: [{timestamp, usd, pay_as_you_go_usd, subscription_usd, tokens_in, tokens_out,
// requests}], currency, total_usd, total_pay_as_you_go_usd, total_subscription_usd,
// subscription_pro_rate: {period: {ratio, settled, determined}}}, possibly under {data: …}. The platform's
// record is the authority; the local ledger's tokens × rate estimates only the pay-as-you-go part.
import { z } from 'zod';
import { apiBase, getJson } from './get-json';
import type { Fetched } from './cached-figures';
import { formatIssues } from '../../shared/zod-issues';

export type EarningsSpan = '24h' | '7d' | '30d';

/** The platform's bucket for each span (hourly up to a day, daily beyond: Go's PlatformSpans). */
export const SPAN_BUCKET: Record<EarningsSpan, '1h' | '1d'> = { '24h': '1h', '7d': '1d', '30d': '1d' };

export interface SettledPoint {
  at: number;
  usd: number;
  payAsYouGoUsd: number;
  subscriptionUsd: number;
  requests: number;
  tokensIn: number;
  tokensOut: number;
}

export interface SettledEarnings {
  span: EarningsSpan;
  currency: string;
  points: SettledPoint[];
  totalUsd: number;
  payAsYouGoUsd: number;
  subscriptionUsd: number;
  /** Per billing period: the subscription's pro-rating ratio and whether it is settled / determined. */
  proRate: Array<{ period: string; ratio: number; settled: boolean; determined: boolean }>;
}

const MAX_POINTS = 2000;
const usd = z.number().finite().min(-1e12).max(1e12);
const count = z.number().finite().nonnegative().max(1e15);
const point = z
  .object({
    timestamp: z.string().max(64),
    usd: usd.default(0),
    pay_as_you_go_usd: usd.default(0),
    subscription_usd: usd.default(0),
    tokens_in: count.default(0),
    tokens_out: count.default(0),
    requests: count.default(0),
  })
  .passthrough();
const history = z
  .object({
    points: z.array(point).max(MAX_POINTS).nullable().default([]),
    currency: z.string().max(16).default('USD'),
    total_usd: usd.default(0),
    total_pay_as_you_go_usd: usd.default(0),
    total_subscription_usd: usd.default(0),
    subscription_pro_rate: z
      .record(
        z.string().max(64),
        z
          .object({ ratio: z.number().finite().min(0).max(1e6).default(0), settled: z.boolean().default(false), determined: z.boolean().default(false) })
          .passthrough(),
      )
      .nullable()
      .default({}),
  })
  .passthrough();

export function parseEarningsHistory(json: unknown, span: EarningsSpan): Fetched<SettledEarnings> {
  const body =
    json &&
    typeof json === 'object' &&
    !Array.isArray(json) &&
    (json as Record<string, unknown>).data &&
    typeof (json as Record<string, unknown>).data === 'object'
      ? (json as Record<string, unknown>).data
      : json;
  const p = history.safeParse(body);
  if (!p.success) return { ok: false, error: `the platform's earnings history is malformed (${formatIssues(p.error, { limit: 1 }) || 'unexpected shape'})` };
  const h = p.data;
  const points = (h.points ?? [])
    .map((x) => ({
      at: Date.parse(x.timestamp),
      usd: x.usd,
      payAsYouGoUsd: x.pay_as_you_go_usd,
      subscriptionUsd: x.subscription_usd,
      requests: x.requests,
      tokensIn: x.tokens_in,
      tokensOut: x.tokens_out,
    }))
    .filter((x) => Number.isFinite(x.at))
    .sort((a, b) => a.at - b.at);
  const proRate = Object.entries(h.subscription_pro_rate ?? {})
    .slice(0, 64)
    .map(([period, r]) => ({ period, ratio: r.ratio, settled: r.settled, determined: r.determined }));
  return {
    ok: true,
    value: {
      span,
      currency: h.currency,
      points,
      totalUsd: h.total_usd,
      payAsYouGoUsd: h.total_pay_as_you_go_usd,
      subscriptionUsd: h.total_subscription_usd,
      proRate,
    },
  };
}

export async function fetchEarningsHistory(o: {
  serviceUrl: string;
  providerKey: string;
  span: EarningsSpan;
  timeoutMs?: number;
}): Promise<Fetched<SettledEarnings>> {
  if (!o.providerKey) return { ok: false, error: 'no provider key is configured' };
  const q = new URLSearchParams({ duration: o.span, bucket: SPAN_BUCKET[o.span] });
  const r = await getJson(`${apiBase(o.serviceUrl)}/provider/me/earnings/history?${q.toString()}`, {
    bearer: o.providerKey,
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  });
  if (!r.ok) return { ok: false, error: r.status === 401 || r.status === 403 ? `the platform refused the provider key (HTTP ${r.status})` : r.error };
  return parseEarningsHistory(r.json, o.span);
}

/**
 * The settled record beside the local ledger's estimate, with the difference explained: the ledger prices
 * tokens at the published rates (pay-as-you-go only); the platform adds subscription shares (pro-rated per
 * billing period, final once settled) and settles what it counted.
 */
export function explainDifference(settled: SettledEarnings, localEstimateUsd: number): { differenceUsd: number; explanation: string } {
  const differenceUsd = Math.round((settled.totalUsd - localEstimateUsd) * 1e6) / 1e6;
  const parts: string[] = [];
  if (settled.subscriptionUsd > 0)
    parts.push(
      `${settled.subscriptionUsd.toFixed(4)} ${settled.currency} of it is subscription revenue, which the local estimate (tokens × published rate) cannot see`,
    );
  const open = settled.proRate.filter((r) => !r.settled || !r.determined).map((r) => r.period);
  if (open.length) parts.push(`the subscription share of ${open.join(', ')} is not final yet (pro-rated when the period settles)`);
  const payg = Math.round((settled.payAsYouGoUsd - localEstimateUsd) * 1e6) / 1e6;
  if (Math.abs(payg) >= 0.000001)
    parts.push(
      `pay-as-you-go differs by ${payg.toFixed(4)} ${settled.currency}: the platform settles the tokens it counted at the rate of the day, the ledger prices what this machine counted`,
    );
  return { differenceUsd, explanation: parts.length ? `${parts.join('; ')}.` : 'The platform settled what this machine estimated.' };
}
