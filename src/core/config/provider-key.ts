// Where the provider key comes from, in order: INFERENCE_API_KEY, the secret store (set in the console),
// config.toml's ApiKey.
import type { ProviderConfig } from './config';
import { KEY_SECRET } from './home-layout';
import type { SecretStore } from './secrets';

/** Where the provider key comes from (Settings shows it). */
export type KeyStorage = 'keychain' | 'file' | 'config' | 'env' | 'none';

export interface KeySources {
  env: NodeJS.ProcessEnv;
  secrets: SecretStore;
  config: ProviderConfig;
}

export function providerKeyOf(k: KeySources): string {
  return k.env.INFERENCE_API_KEY || k.secrets.get(KEY_SECRET) || k.config.apiKey;
}

export function keyStorageOf(k: KeySources): KeyStorage {
  if (k.env.INFERENCE_API_KEY) return 'env';
  if (k.secrets.get(KEY_SECRET)) return k.secrets.kind;
  return k.config.apiKey ? 'config' : 'none';
}
