// The values in use where the console's settings overlay config.toml: the node's name, the addresses the
// provider key goes to (with the tests' network stand-ins applied), and the key itself and where it is kept.
// Every feature reads them here, so none repeats the overlay.
import type { ProviderConfig } from './config';
import type { NetworkStandIns } from './network-stand-ins';
import { keyStorageOf, providerKeyOf, type KeyStorage } from './provider-key';
import type { SecretStore } from './secrets';
import type { SettingsFile } from './settings-file';

export class OwnerValues {
  constructor(
    readonly config: ProviderConfig,
    readonly settings: SettingsFile,
    readonly secrets: SecretStore,
    readonly env: NodeJS.ProcessEnv,
    /** Tests' stand-ins of the named networks (config/network-stand-ins.ts); none for an owner. */
    readonly standIns: NetworkStandIns,
  ) {}

  nodeName(): string {
    return this.settings.get().nodeName ?? this.config.nodeName;
  }

  /** The hub address as configured (Settings, else config.toml), before any stand-in. */
  hubUrl(): string {
    return this.settings.get().hubUrl ?? this.config.webSocketUrl;
  }

  /** The platform's address actually asked (Settings, else config.toml; a stand-in in tests). */
  serviceUrl(): string {
    return this.standIns.serviceUrl(this.settings.get().serviceUrl ?? this.config.serviceUrl);
  }

  providerKey(): string {
    return providerKeyOf({ env: this.env, secrets: this.secrets, config: this.config });
  }

  keyStorage(): KeyStorage {
    return keyStorageOf({ env: this.env, secrets: this.secrets, config: this.config });
  }
}
