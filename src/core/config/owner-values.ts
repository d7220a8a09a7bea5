// The values in use where the console's settings overlay config.toml: the node's name, the addresses the
// provider key goes to (with the tests' network stand-ins applied), and the key itself and where it is kept.
// Every feature reads them here, so none repeats the overlay.
import type { ProviderConfig } from './config';
import { KeyDestinations, keyHost } from './key-destinations';
import { networkStandIns, type NetworkStandIns } from './network-stand-ins';
import { keyStorageOf, providerKeyOf, type KeyStorage } from './provider-key';
import { FileSecretStore, type SecretStore } from './secrets';
import { SettingsFile } from './settings-file';

export class OwnerValues {
  constructor(
    readonly config: ProviderConfig,
    readonly settings: SettingsFile,
    readonly secrets: SecretStore,
    readonly env: NodeJS.ProcessEnv,
    /** Tests' stand-ins of the named networks (config/network-stand-ins.ts); none for an owner. */
    readonly standIns: NetworkStandIns,
    /** Which hosts each key was approved for; without it (tests of other parts) every key goes where it is set. */
    readonly destinations?: KeyDestinations,
  ) {
    // A home from before the approvals were kept: what is in use now is what the owner ran (trusted once).
    destinations?.seed(this.keyInUse(), this.keyHosts());
  }

  /**
   * The values of a home as its agent reads them, for a command that only looks (`doctor`, `usage`, `account`):
   * the same overlay, the same key and the same holds, nothing written. A home whose approvals were never kept
   * is read as its agent would seed them at its next start: the key in use goes where it is set.
   */
  static ofHome(home: string, config: ProviderConfig, env: NodeJS.ProcessEnv): OwnerValues {
    const destinations = new KeyDestinations(home);
    return new OwnerValues(
      config,
      SettingsFile.in(home),
      new FileSecretStore(home),
      env,
      networkStandIns(env),
      destinations.exists() ? destinations : undefined,
    );
  }

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

  /**
   * The provider key to send: the key in use, when the owner allowed it to go to every host it would reach
   * now; '' (held, never sent) otherwise. Asked at every use, so a change of the key in use (a cleared typed
   * key, a config reload) is checked as a change of host is.
   */
  providerKey(): string {
    const key = this.keyInUse();
    return key && this.keyHeld(key).length > 0 ? '' : key;
  }

  /** The key the sources name, in their order (environment, the console's store, config.toml), sent or not. */
  keyInUse(): string {
    return providerKeyOf({ env: this.env, secrets: this.secrets, config: this.config });
  }

  /** The hosts (host:port) the key goes to with the addresses configured now: the hub and the platform's API. */
  keyHosts(): string[] {
    return this.hostsOf(this.hubUrl(), this.settings.get().serviceUrl ?? this.config.serviceUrl);
  }

  hostsOf(hubUrl: string, serviceUrl: string): string[] {
    return [...new Set([keyHost(hubUrl), keyHost(serviceUrl)].filter((h): h is string => h !== undefined))];
  }

  /** Whether the owner allowed `key` to go to `host`: config.toml's own hosts for its key or the environment's, else an approval kept. */
  keyApproved(key: string, host: string): boolean {
    if (!this.destinations) return true;
    const ownerKey = key === this.config.apiKey || key === (this.env.INFERENCE_API_KEY ?? '');
    if (ownerKey && this.hostsOf(this.config.webSocketUrl, this.config.serviceUrl).includes(host.toLowerCase())) return true;
    return this.destinations.has(key, host);
  }

  /** The hosts `key` would reach now without the owner's word ([] when none: it may be sent). */
  keyHeld(key = this.keyInUse()): string[] {
    return key ? this.keyHosts().filter((h) => !this.keyApproved(key, h)) : [];
  }

  keyStorage(): KeyStorage {
    return keyStorageOf({ env: this.env, secrets: this.secrets, config: this.config });
  }
}
