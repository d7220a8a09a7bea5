// The network's records beside this machine's (the Usage page's "The network's records" card): per model
// what the platform holds (offered, available, recent failures, dispatch failures, throughput, last request)
// beside this ledger's requests, errors and speed over the same period; the platform's settled earnings
// (pay-as-you-go and subscription) beside the ledger's estimate, with the difference explained.
import type { NetworkRecordsView } from '../../shared/views/usage';
import type { Ledger } from '../ledger/ledger';
import { ModelDetailsReader } from '../platform/model-details';
import { explainDifference, fetchEarningsHistory, type EarningsSpan } from '../platform/earnings-history';
import type { Verbs } from './verbs';

const SPAN_MS: Record<EarningsSpan, number> = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

export function networkVerbs(d: {
  ledger: Ledger | undefined;
  serviceUrl: () => string;
  providerKey: () => string;
  announced: () => string[];
}): Verbs<'network.records'> {
  const reader = new ModelDetailsReader({ serviceUrl: d.serviceUrl, providerKey: d.providerKey });
  return {
    'network.records': async ({ span }): Promise<NetworkRecordsView> => {
      const to = Date.now();
      const report = d.ledger?.report(to - SPAN_MS[span], to, span === '24h' ? 'hour' : 'day');
      const local = new Map((report?.perModel ?? []).map((m) => [m.model, m]));
      const localEstimateUsd = report?.totals.earnings ?? 0;
      const announced = d.announced();
      const [models, settled] = await Promise.all([reader.fetch(), fetchEarningsHistory({ serviceUrl: d.serviceUrl(), providerKey: d.providerKey(), span })]);
      const offered = new Set(models.ok ? models.value.filter((m) => m.offered).map((m) => m.modelId) : []);
      return {
        span,
        models: models.ok
          ? {
              ok: true,
              rows: models.value.map((m) => {
                const l = local.get(m.modelId);
                return {
                  modelId: m.modelId,
                  offered: m.offered,
                  available: m.available,
                  capacity: m.capacity,
                  recentSuccesses: m.recentSuccesses,
                  recentFailures: m.recentFailures,
                  dispatchFailures: m.dispatchFailures,
                  throughput: m.throughput,
                  ...(m.lastRequestAt !== undefined ? { lastRequestAt: m.lastRequestAt } : {}),
                  servedHere: announced.includes(m.modelId),
                  local: { requests: l?.requests ?? 0, errors: l?.errors ?? 0, tokensPerSecond: l?.p50TokensPerSecond ?? null },
                };
              }),
              // Announced here, not held as offered there: the network sends them nothing.
              notListed: announced.filter((id) => !offered.has(id)).sort(),
            }
          : { ok: false, error: models.error },
        earnings: settled.ok
          ? {
              ok: true,
              currency: settled.value.currency,
              points: settled.value.points.map((p) => ({
                at: p.at,
                usd: p.usd,
                payAsYouGoUsd: p.payAsYouGoUsd,
                subscriptionUsd: p.subscriptionUsd,
                requests: p.requests,
              })),
              totalUsd: settled.value.totalUsd,
              payAsYouGoUsd: settled.value.payAsYouGoUsd,
              subscriptionUsd: settled.value.subscriptionUsd,
              localEstimateUsd,
              ...explainDifference(settled.value, localEstimateUsd),
            }
          : { ok: false, error: settled.error, localEstimateUsd },
      };
    },
  };
}
