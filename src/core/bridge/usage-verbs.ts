// The Usage page's verbs: the ledger's reports and CSV, per-model figures, prices and the electricity
// price, the earnings overview, and the network's demand (pull a model, serve it).
import type { PriceRow, PricesView, RailsView, UsageReport } from '../../shared/views/usage';
import { BridgeError } from '../../shared/bridge-error';
import type { UsageTotals } from '../../shared/types';
import type { EarningsService } from '../accounting/earnings';
import type { Ledger } from '../ledger/ledger';
import { LedgerValueError } from '../ledger/db-errors';
import { modelReport } from './console-extras';
import type { Verbs } from './verbs';

const EMPTY_TOTALS: UsageTotals = { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };

type UsageChannel =
  | 'usage.report'
  | 'usage.exportCsv'
  | 'usage.model'
  | 'usage.rails'
  | 'earnings.overview'
  | 'earnings.setElectricity'
  | 'prices.list'
  | 'prices.set'
  | 'demand.list'
  | 'demand.pull'
  | 'demand.serve';

/** The newest price per model (earlier rows stay in the ledger as history). */
function prices(ledger: Ledger | undefined): PricesView {
  const latest = new Map<string, PriceRow>();
  for (const p of ledger?.prices() ?? []) {
    const cur = latest.get(p.model);
    if (!cur || p.effectiveFrom >= cur.effectiveFrom) latest.set(p.model, p);
  }
  return { earningsEnabled: ledger?.isEarningsEnabled() ?? false, prices: [...latest.values()].sort((x, y) => x.model.localeCompare(y.model)) };
}

export function usageVerbs(d: { ledger: Ledger | undefined; earnings: EarningsService; changed: () => void }): Verbs<UsageChannel> {
  const { ledger, earnings } = d;
  return {
    'usage.report': ({ from, to, bucket }): UsageReport =>
      ledger?.report(from, to, bucket) ?? { from, to, totals: EMPTY_TOTALS, buckets: [], perModel: [], errorRate: 0 },
    'usage.exportCsv': ({ from, to }) => {
      if (!ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs).');
      return ledger.exportCsv(from, to);
    },
    'usage.model': ({ model, hours }: { model: string; hours: number }) => modelReport(ledger, model, hours),
    // The rails' decisions (rail_events): time paused/throttled by cause over the range, the latest 20.
    'usage.rails': ({ from, to }): RailsView => {
      if (!ledger)
        return { summary: { from, to, pausedMs: 0, pausedByCause: {}, throttledMs: 0, throttledByCause: {}, openPause: [], openThrottle: [] }, recent: [] };
      try {
        return { summary: ledger.railSummaryWithCost(from, to), recent: ledger.recentRails(20) };
      } catch (e) {
        if (e instanceof LedgerValueError) throw new BridgeError('invalid_args', e.message, e.field);
        throw e;
      }
    },
    'earnings.overview': ({ refresh }) => earnings.overview(refresh ?? false),
    'earnings.setElectricity': ({ perKwh, currency, usdPerUnit }) => {
      if (!ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs), so the electricity price cannot be saved.');
      const cur = currency ?? 'USD';
      if (perKwh !== null && cur !== 'USD' && usdPerUnit === undefined)
        throw new BridgeError('invalid_args', `Give the value of 1 ${cur} in USD too, so power cost and earnings (paid in USD) can be compared.`);
      try {
        ledger.setElectricityPrice(perKwh === null ? null : { perKwh, currency: cur, usdPerUnit: cur === 'USD' ? 1 : (usdPerUnit ?? 1) });
      } catch (e) {
        throw e instanceof LedgerValueError
          ? new BridgeError('invalid_args', e.message, e.field)
          : new BridgeError('failed', `The electricity price could not be saved: ${(e as Error).message}`);
      }
      d.changed();
      return earnings.overview();
    },
    'prices.list': () => prices(ledger),
    'prices.set': ({ model, inputPerM, outputPerM }) => {
      if (!ledger) throw new BridgeError('unavailable', 'The usage history is unavailable right now (see Logs), so prices cannot be saved.');
      ledger.setPrice(model, inputPerM, outputPerM);
      d.changed();
      return prices(ledger);
    },
    'demand.list': () => earnings.demand(),
    'demand.pull': ({ engineUrl, model, networkId }) => earnings.pull(engineUrl, model, networkId),
    'demand.serve': ({ modelId }) => earnings.serve(modelId),
  };
}
