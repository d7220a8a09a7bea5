// The local gateway's keys: listed, minted (only with the owner's approval, given outside the console) and
// revoked.
import { BridgeError } from '../../shared/bridge-error';
import type { GatewayKeys } from '../gateway/keys';
import type { Owner } from '../owner/owner';
import type { Verbs } from './verbs';

export function gatewayKeyVerbs(d: {
  keys: GatewayKeys;
  owner: Pick<Owner, 'requireOwner'>;
  changed: () => void;
}): Verbs<'gateway.keys.list' | 'gateway.keys.create' | 'gateway.keys.revoke'> {
  const { keys } = d;
  return {
    'gateway.keys.list': () => keys.list(),
    'gateway.keys.create': ({ name, grant }) => {
      // A gateway key is a credential to this machine's engines: minted only with the owner's approval,
      // given outside the console; the call that follows it (with the grant its refusal carried) gets the key, once.
      if (keys.list().some((k) => k.name === name))
        throw new BridgeError('already_exists', `A key named "${name}" already exists; revoke it first or pick another name.`);
      d.owner.requireOwner(
        'gateway_key',
        name,
        grant,
        `Create the gateway key "${name}": whoever holds it can run requests on this machine's engines through the local gateway.`,
      );
      const k = keys.create(name);
      d.changed();
      return k;
    },
    'gateway.keys.revoke': ({ name }) => {
      if (!keys.revoke(name)) throw new BridgeError('not_found', `No gateway key named "${name}".`);
      d.changed();
      return keys.list();
    },
  };
}
