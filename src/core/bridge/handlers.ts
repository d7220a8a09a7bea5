// The bridge verbs: each validates its arguments with the shared schemas and answers with plain data.
// An invalid call is refused with a message that names the channel and the problem. The verbs come in
// groups (one file each), each given only the parts it uses; here they are put in one table.
import { invokeSchemas } from '../../shared/bridge/schemas';
import { isInvokeChannel, type InvokeChannel } from '../../shared/bridge/channels';
import { type AgentSnapshot } from '../../shared/views/snapshot';
import { BridgeError } from '../../shared/bridge-error';
import { formatIssues, issueField } from '../../shared/zod-issues';
import type { OwnerValues } from '../config/owner-values';
import type { Fleet } from '../fleet/fleet';
import { fleetVerbs } from '../fleet/fleet-verbs';
import type { AgentLog } from '../base/log';
import type { Accounting } from '../accounting/accounting';
import type { Engines } from '../engines/engines';
import type { Owner } from '../owner/owner';
import type { Serving } from '../serving/serving';
import { accountVerbs } from './account-verbs';
import { consoleVerbs } from './console-verbs';
import { engineVerbs } from './engines-verbs';
import { toBridgeError } from './errors';
import { gatewayKeyVerbs } from './gateway-verbs';
import { managedVerbs } from './managed-verbs';
import { modelVerbs } from './models-verbs';
import { servingVerbs } from './serving-verbs';
import { settingsVerbs } from './settings-verbs';
import { usageVerbs } from './usage-verbs';
import { networkVerbs } from './network-verbs';
import type { Verbs } from './verbs';

export interface HandlerDeps {
  mode: 'desktop' | 'headless';
  values: OwnerValues;
  engines: Engines;
  accounting: Accounting;
  serving: Serving;
  owner: Owner;
  fleet: Fleet;
  log: AgentLog;
  snapshot: () => AgentSnapshot;
  /** Something the console shows changed (a snapshot follows, coalesced). */
  changed: () => void;
  requestText: (id: string) => string;
}

export class BridgeHandlers {
  private readonly table: Verbs<InvokeChannel>;

  constructor(d: HandlerDeps) {
    const { engines, accounting, serving, owner, values, snapshot, changed } = d;
    const { settings } = values;
    this.table = {
      ...fleetVerbs(d.fleet, d.log, (name, grant) =>
        owner.requireOwner(
          'fleet_token',
          name,
          grant,
          `Create the fleet token "${name}": whoever holds it can read this rig's figures (models, requests, earnings) until you revoke it.`,
        ),
      ),
      ...modelVerbs({ engines, settings, models: () => snapshot().models }),
      ...engineVerbs({ engines, settings, owner, env: values.env }),
      ...managedVerbs({
        engines,
        settings,
        serviceUrl: () => values.serviceUrl(),
        catalogueIds: () => accounting.catalogue.ids(),
        serveAs: (networkId, url, local) => accounting.earnings.serveAs(networkId, url, local),
        models: () => snapshot().models,
      }),
      ...servingVerbs({ engines, serving, env: values.env }),
      ...settingsVerbs({ values, owner, snapshot, changed }),
      ...gatewayKeyVerbs({ keys: serving.gatewayKeys, owner, changed }),
      ...usageVerbs({ ledger: accounting.ledger, earnings: accounting.earnings, changed }),
      ...accountVerbs({ values, owner, refreshStatus: () => serving.providerGate.check(), changed }),
      ...networkVerbs({
        ledger: accounting.ledger,
        serviceUrl: () => values.serviceUrl(),
        providerKey: () => values.providerKey(),
        announced: () => engines.announced(),
      }),
      ...consoleVerbs({
        mode: d.mode,
        log: d.log,
        book: engines.book,
        alerts: owner.alerts,
        webhook: owner.webhook,
        email: owner.email,
        snapshot,
        settingsView: () => owner.settingsView(),
        updates: owner.updates,
        requestText: d.requestText,
      }),
    };
  }

  async invoke(channel: string, args: unknown): Promise<unknown> {
    if (!isInvokeChannel(channel)) throw new BridgeError('unknown_channel', `Unknown request "${String(channel).slice(0, 64)}".`);
    const parsed = invokeSchemas[channel].safeParse(args ?? {});
    if (!parsed.success) {
      const detail = formatIssues(parsed.error, { root: 'arguments' });
      throw new BridgeError('invalid_args', `Invalid arguments for ${channel}: ${detail}`, issueField(parsed.error));
    }
    const handler = this.table[channel] as (a: unknown) => unknown;
    try {
      return await handler(parsed.data);
    } catch (e) {
      throw toBridgeError(e);
    }
  }
}
