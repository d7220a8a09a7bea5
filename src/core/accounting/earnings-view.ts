// Pure pieces of the earnings overview: why the platform's totals and the local ledger differ, the
// projection at the recent rate with its assumptions in words, and why today's earnings are zero.
import type { DifferenceReason, EarningsZeroReason, LocalLifetimeView, PlatformFigures, PlatformStatsView } from '../../shared/views/usage';
import type { UsageTotals } from '../../shared/types';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

function when(t: number): string {
  return new Date(t).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

function n(v: number): string {
  return v.toLocaleString('en-US');
}

export function explainDifference(
  platform: PlatformFigures<PlatformStatsView>,
  local: LocalLifetimeView,
): { difference: { requests: number; tokens: number; earningsUsd: number } | null; reasons: DifferenceReason[] } {
  const reasons: DifferenceReason[] = [];
  const p = platform.value;
  if (!p) {
    reasons.push({
      code: 'platform_unavailable',
      text: `The platform's record could not be read${platform.error ? ` (${platform.error})` : ''}; only the local ledger is shown. It is tried again every 30 s.`,
    });
  } else if (platform.stale) {
    reasons.push({
      code: 'platform_stale',
      text: `The platform's figures are from ${platform.asOf !== null ? when(platform.asOf) : 'an earlier check'}${platform.error ? ` (${platform.error})` : ''}; requests served since then are only in the local ledger.`,
    });
  }
  const u = local.undelivered;
  if (u.requests > 0) {
    reasons.push({
      code: 'undelivered',
      text: `${n(u.requests)} request${u.requests === 1 ? '' : 's'} (${n(u.tokensIn + u.tokensOut)} tokens) finished here but their end never reached the hub: the link was down, or the agent stopped while sending. The platform does not count them as served.`,
    });
  }
  if (!p) return { difference: null, reasons };
  const difference = {
    requests: p.totalInferences - local.requests,
    tokens: p.totalTokens - (local.tokensIn + local.tokensOut),
    earningsUsd: p.totalEarningsUsd - local.earnings,
  };
  if (p.failedInferences !== local.failed) {
    reasons.push({
      code: 'failed',
      text: `The platform counts ${n(p.failedInferences)} failed request${p.failedInferences === 1 ? '' : 's'}, this ledger ${n(local.failed)}: a request the hub gave up on, or sent again to another provider, is counted by the hub as it saw it.`,
    });
  }
  if (difference.requests > 0 || local.firstAt === null) {
    reasons.push({
      code: 'ledger_age',
      text:
        local.firstAt === null
          ? 'This ledger has no requests yet; the platform counts everything since this provider registered.'
          : `This ledger starts at ${when(local.firstAt)}: requests served before this console was installed, or older than the retention period, are not in it. The platform counts since this provider registered.`,
    });
  }
  if (difference.tokens !== 0 && difference.requests === 0) {
    reasons.push({
      code: 'tokens_differ',
      text: `The token counts differ by ${n(Math.abs(difference.tokens))}: this ledger keeps an estimate where the engine reported none (marked "estimated"), and the hub counts only the tokens the engine reported.`,
    });
  }
  // Money is compared to the micro-dollar: a platform figure beside $0.00 is never "in agreement".
  if (Math.abs(difference.earningsUsd) >= 0.000001) {
    reasons.push(
      local.earnings === 0 && p.totalEarningsUsd > 0
        ? {
            code: 'local_unpaid',
            text: 'This ledger counts these requests at $0: earnings were not enabled, or no network rate was known, when they finished here. The platform pays what it settles; its figure is the authority.',
          }
        : {
            code: 'rates_differ',
            text: 'Local earnings are computed at the network rate in force when each request finished here (or your own estimate for a model the network does not price); the platform pays what it settles. The platform is the authority.',
          },
    );
  }
  const agree = difference.requests === 0 && difference.tokens === 0 && Math.abs(difference.earningsUsd) < 0.000001 && p.failedInferences === local.failed;
  if (reasons.length === 0 && agree) reasons.push({ code: 'match', text: 'The platform and this ledger agree.' });
  return { difference, reasons };
}

export interface ProjectionInput {
  now: number;
  /** When the oldest record finished (null: none). */
  firstAt: number | null;
  /** Totals over the window ending now. */
  recent: UsageTotals;
  windowMs: number;
  electricitySet: boolean;
}

/** The recent window: the last 24 h, or the ledger's life when shorter. */
export function recentWindow(now: number, firstAt: number | null): number {
  return firstAt === null ? 0 : Math.max(0, Math.min(DAY_MS, now - firstAt));
}

export function projection(i: ProjectionInput): { perDay: number; perMonth: number; assumptions: string[] } | { unavailable: string } {
  if (i.firstAt === null || i.recent.requests === 0) return { unavailable: 'No requests in the last 24 hours: nothing to project from.' };
  if (i.windowMs < HOUR_MS) return { unavailable: 'Less than an hour of records: a projection needs at least one hour.' };
  const net = i.recent.earnings - (i.recent.cost ?? 0);
  const perDay = (net * DAY_MS) / i.windowMs;
  const hours = Math.round(i.windowMs / HOUR_MS);
  const assumptions = [
    i.windowMs >= DAY_MS
      ? 'Traffic, the network rates and your electricity price stay as they were over the last 24 hours.'
      : `Traffic, the network rates and your electricity price stay as they were over the last ${hours === 1 ? 'hour' : `${hours} hours`} (this ledger is younger than a day), scaled to 24 hours.`,
    'Power is counted only while requests run; the GPU’s idle draw is not included.',
    'Earnings are this ledger’s figures at the network’s payout rates; the platform’s payout is the authority.',
    'A month is 30 days.',
  ];
  if (!i.electricitySet) assumptions.push('No electricity price is set, so power costs nothing here: set one to see what you keep.');
  return { perDay, perMonth: perDay * 30, assumptions };
}

export function zeroReason(o: {
  earnings: number;
  requests: number;
  enabled: boolean;
  anyPriced: boolean;
  pricesKnown?: boolean;
}): EarningsZeroReason | undefined {
  if (o.earnings > 0) return undefined;
  if (!o.enabled) return 'earnings_disabled';
  // Not priced is said only on the price list's word: one never read makes it unknown.
  if (!o.anyPriced) return o.pricesKnown === false ? 'prices_unknown' : 'no_priced_model';
  if (o.requests === 0) return 'no_requests';
  return 'no_paid_requests';
}
