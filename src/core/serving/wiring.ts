// Serving state: the link, pause and scheduler changes reach the console (and the hub, for pause); the
// provider status's earnings flag reaches the ledger each time the platform is asked; each finished
// request the hub counts feeds the heartbeat's figures.
import type { LinkReasonCode, PauseState } from '../../shared/types';
import type { HubLink } from '../hub/link';
import type { ProviderGate } from '../hub/provider-status';
import type { RequestMetrics } from '../hub/request-metrics';
import { POLICY } from '../inference/purpose';
import type { Ledger } from '../ledger/ledger';
import type { Logger } from '../base/log';
import type { Engines } from '../engines/engines';

export interface ServingParts {
  link: HubLink;
  engines: Pick<Engines, 'pause' | 'scheduler' | 'book'>;
  providerGate: ProviderGate;
  requestMetrics: RequestMetrics;
  ledger: Ledger | undefined;
  log: Logger;
}

export interface ServingOutlets {
  announce: () => void;
  changed: () => void;
  disconnected: (reason: string, code: LinkReasonCode) => void;
}

export function wireServing(p: ServingParts, o: ServingOutlets): void {
  p.link.on('state', (st) => {
    o.changed();
    if (st.state === 'connected') p.log.info('connected to the hub and registered');
  });
  p.link.on('disconnected', (reason, code) => o.disconnected(reason, code));
  p.engines.pause.on('change', (s: PauseState) => {
    p.log.info(s.paused ? `serving paused: ${s.reason ?? s.cause}` : 'serving resumed');
    o.announce();
  });
  p.engines.scheduler.on('change', () => o.changed());
  p.providerGate.on('change', (v) => {
    if (v.earningsEnabled !== undefined && v.earningsEnabled !== p.ledger?.isEarningsEnabled()) p.ledger?.setEarningsEnabled(v.earningsEnabled);
    o.changed();
  });
  p.engines.book.on('finished', (record, view) => {
    // The heartbeat's request figures are the hub's: its purpose's row says whether a request counts.
    if (view.purpose ? POLICY[view.purpose].heartbeat : record.source === 'hub') p.requestMetrics.record(record);
  });
}
