// Payout and activation: the provider's addresses on the platform, the collateral step, and asking for
// approval, which the Go provider offers only from its CLI or the web dashboard. Where payouts go is the
// owner's alone to change: a new payout or owner address is held for the owner's approval given outside the
// console (as a gateway key is), bound to that exact address and redeemed only with the `grant` the asking
// call's refusal carried; the owner address is set once, never changed.
import { BridgeError } from '../../shared/bridge-error';
import type { OwnerValues } from '../config/owner-values';
import type { Owner } from '../owner/owner';
import { isWalletAddress, ProviderAccountClient } from '../platform/provider-account';
import type { Verbs } from './verbs';

export interface AccountVerbDeps {
  values: Pick<OwnerValues, 'serviceUrl' | 'providerKey' | 'nodeName'>;
  owner: Pick<Owner, 'requireOwner'>;
  /** Asks the platform for the provider status again (after an approval request it moves on). */
  refreshStatus: () => Promise<unknown>;
  changed: () => void;
}

export function accountVerbs(d: AccountVerbDeps): Verbs<'account.get' | 'account.setBeneficiary' | 'account.setOwner' | 'account.requestApproval'> {
  const client = new ProviderAccountClient({ serviceUrl: () => d.values.serviceUrl(), providerKey: () => d.values.providerKey() });
  /** The form is checked before the owner is asked: an approval for a typo helps no one. */
  const checked = (address: string): string => {
    if (!isWalletAddress(address))
      throw new BridgeError('invalid_args', 'That is not a wallet address: it starts with 0x and has 40 letters a–f and digits after it.', 'address');
    return address;
  };
  return {
    'account.get': () => client.view(),
    'account.setBeneficiary': async ({ address, grant }) => {
      const a = checked(address);
      d.owner.requireOwner('payout_address', a.toLowerCase(), grant, `Send this provider's payouts to ${a}.`);
      const r = await client.setBeneficiary(a);
      d.changed();
      return r;
    },
    'account.setOwner': async ({ address, grant }) => {
      const a = checked(address);
      d.owner.requireOwner(
        'payout_address',
        `owner:${a.toLowerCase()}`,
        grant,
        `Make ${a} this provider's owner address, for good: the platform never changes it.`,
      );
      const r = await client.setOwner(a);
      d.changed();
      return r;
    },
    'account.requestApproval': async ({ providerName, hardwareSummary, contactEmail }) => {
      const r = await client.requestApproval({ providerName: providerName || d.values.nodeName(), hardwareSummary, contactEmail });
      if (r.ok || r.code === 'approval_already_requested') await d.refreshStatus().catch(() => undefined);
      return r;
    },
  };
}
