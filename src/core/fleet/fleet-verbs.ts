// The bridge verbs of the Fleet page (and the Usage page's fleet card): the rigs this console reads, and
// the read-only tokens other consoles use to read this rig. Reached only by the owner's own console (IPC,
// or the browser console's bridge, which never accepts a fleet token).
import type { InvokeResults } from '../../shared/bridge/channels';
import type { InvokeArgs } from '../../shared/bridge/schemas';
import type { AgentLog } from '../base/log';
import type { Fleet } from './fleet';
import { FleetError } from './tokens';
import { splitBookmark } from './fleet-reader';

type FleetChannel =
  'fleet.list' | 'fleet.add' | 'fleet.remove' | 'fleet.openConsole' | 'fleet.usage' | 'fleet.tokens.list' | 'fleet.tokens.create' | 'fleet.tokens.revoke';

export function fleetVerbs(
  fleet: Fleet,
  log: Pick<AgentLog, 'child' | 'addSecrets'>,
  /** Throws unless the owner approved minting this token (a read token outlives the console session that asked). */
  ownerApproved: (name: string, grant: string | undefined) => void,
): { [C in FleetChannel]: (args: InvokeArgs<C>) => Promise<InvokeResults[C]> | InvokeResults[C] } {
  const l = log.child('fleet');
  return {
    'fleet.list': () => fleet.reader.view(),
    'fleet.add': async ({ url, token, label }) => {
      // Redacted from every log line from now on, whether typed in its field or pasted inside a bookmark.
      log.addSecrets([token, splitBookmark(url).token]);
      return fleet.reader.add({ url, ...(token !== undefined ? { token } : {}), ...(label !== undefined ? { label } : {}) });
    },
    'fleet.remove': ({ id }) => fleet.reader.remove(id),
    'fleet.openConsole': ({ id }) => fleet.reader.consoleLink(id),
    'fleet.usage': () => fleet.reader.usage(),
    'fleet.tokens.list': () => fleet.tokens.list(),
    'fleet.tokens.create': ({ name, grant }) => {
      if (fleet.tokens.list().some((t) => t.name === name))
        throw new FleetError('fleet_token_name_taken', `A fleet token named "${name}" exists already; revoke it first or pick another name.`, 'name');
      ownerApproved(name, grant);
      const made = fleet.tokens.create(name);
      log.addSecrets([made.token]);
      l.info(`fleet: made the read-only token "${name}"`);
      return made;
    },
    'fleet.tokens.revoke': ({ name }) => {
      if (!fleet.tokens.revoke(name)) throw new FleetError('fleet_token_not_found', `No fleet token is named "${name}".`, 'name');
      l.info(`fleet: revoked the token "${name}"`);
      return fleet.tokens.list();
    },
  };
}
