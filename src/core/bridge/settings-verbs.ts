// Settings' verbs: read and save the settings (a save that would send the provider key somewhere new waits
// for the owner: owner/owner.ts), check a key with the platform, finish onboarding.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import { BridgeError } from '../../shared/bridge-error';
import type { OwnerValues } from '../config/owner-values';
import { checkProviderKey } from '../hub/provider-status';
import type { Owner } from '../owner/owner';
import type { Verbs } from './verbs';

export interface SettingsVerbDeps {
  values: OwnerValues;
  owner: Pick<Owner, 'settingsView' | 'saveSettings'>;
  snapshot: () => AgentSnapshot;
  changed: () => void;
}

export function settingsVerbs(d: SettingsVerbDeps): Verbs<'settings.get' | 'settings.save' | 'settings.checkKey' | 'onboarding.complete'> {
  return {
    'settings.get': () => d.owner.settingsView(),
    'settings.save': ({ patch }) => d.owner.saveSettings(patch),
    'settings.checkKey': ({ key }) => checkProviderKey(d.values.standIns.serviceUrl(d.owner.settingsView().serviceUrl), key),
    'onboarding.complete': () => {
      if (!d.values.providerKey()) throw new BridgeError('not_ready', 'Paste your provider key first.');
      d.values.settings.update((s) => ({ ...s, onboarded: true }));
      const snap = d.snapshot();
      d.changed();
      return snap;
    },
  };
}
