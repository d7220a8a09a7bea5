// The desktop SecretStore: Electron safeStorage (macOS Keychain, Windows DPAPI, libsecret/kwallet on Linux).
// Without a usable keychain it falls back to the 0600 file store and says so. Call after app 'ready'.
import { safeStorage } from 'electron';
import type { Logger } from '../core/base/log';
import { FileSecretStore, type SecretStore } from '../core/config/secrets';
import { EncryptedSecretStore, migratePlainSecrets } from './encrypted-secret-store';
import { homePath } from '../core/config/home-layout';

/** Why the keychain cannot be used here, or undefined when it can. */
function keychainProblem(): string | undefined {
  if (!safeStorage.isEncryptionAvailable()) return 'the operating system offers no keychain to this app';
  // On Linux without libsecret/kwallet Chromium "encrypts" with a fixed key: that is plain text in disguise.
  if (process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text') {
    return 'no Secret Service (GNOME Keyring, KWallet) is running';
  }
  return undefined;
}

export function createDesktopSecretStore(home: string, log: Logger): SecretStore {
  const problem = keychainProblem();
  if (problem) {
    const file = homePath(home, 'secrets');
    log.warn(
      `The provider key is kept in ${file} (readable only by your user), not in the OS keychain: ${problem}. ` +
        'Start a keychain service and restart the app to move it there.',
    );
    return new FileSecretStore(home);
  }
  const store = new EncryptedSecretStore(home, safeStorage, (msg) => log.warn(msg));
  const moved = migratePlainSecrets(homePath(home, 'secrets'), store);
  if (moved.length > 0) log.info(`Moved ${moved.length} saved secret(s) from a plain file into the OS keychain.`);
  log.info('Secrets are protected by the OS keychain.');
  return store;
}
