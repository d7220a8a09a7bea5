// Whether the hub pays for this node's work: earnings_enabled from the provider status
// (GET {ServiceURL}/api/v1/provider/status), kept in the ledger. No key or no ledger: nothing to do.
import { fetchProviderStatus } from '../hub/provider-status';
import type { Ledger } from '../ledger/ledger';
import type { Logger } from '../base/log';

export async function refreshEarningsFlag(o: { key: string; serviceUrl: string; ledger?: Ledger; log: Logger }): Promise<void> {
  if (!o.key || !o.ledger) return;
  const r = await fetchProviderStatus(o.serviceUrl, o.key);
  if (r.status?.earnings_enabled !== undefined) o.ledger.setEarningsEnabled(r.status.earnings_enabled);
  else if (r.error) o.log.debug(`provider status unavailable: ${r.error}`);
}
