// What the fleet tells the rest of the agent: each round of reads reaches the console (the `fleet` event),
// and a rig that stops answering is an alert (log, webhook, desktop and browser notifications), once per
// outage: it is raised again only after the rig has answered in between.
import type { BridgeEvent } from '../../shared/bridge/events';
import type { AlertList } from '../alerts/alert-list';
import { fmtClock } from '../../shared/dates';
import type { FleetReader } from './fleet-reader';

export function wireFleet(reader: FleetReader, alerts: AlertList, bridge: (e: BridgeEvent) => void): void {
  reader.on('change', (fleet) => bridge({ type: 'fleet', fleet }));
  reader.on('lost', (rig) => {
    const last = rig.lastSeenAt !== undefined ? ` Its last figures are from ${fmtClock(rig.lastSeenAt)}.` : '';
    alerts.raise(
      'rig_unreachable',
      rig.status === 'refused' ? `${rig.label} refuses this console's token` : `${rig.label} does not answer`,
      `${rig.error ?? 'The rig cannot be read.'}${last} It stays on the Fleet page until it answers again or you remove it.`,
    );
  });
}
