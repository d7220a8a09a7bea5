// The keychain-backed SecretStore, with a real AES-GCM cipher in place of Electron's safeStorage.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSecretStore } from '../../src/core/config/secrets';
import { EncryptedSecretStore, KEYCHAIN_FILE, migratePlainSecrets, type StringCipher } from '../../src/main/encrypted-secret-store';

/** AES-256-GCM with a per-instance key: what an OS keychain does, minus the OS. */
function aesCipher(key = crypto.randomBytes(32)): StringCipher {
  return {
    encryptString(plain) {
      const iv = crypto.randomBytes(12);
      const c = crypto.createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
      return Buffer.concat([iv, c.getAuthTag(), body]);
    },
    decryptString(buf) {
      const d = crypto.createDecipheriv('aes-256-gcm', key, buf.subarray(0, 12));
      d.setAuthTag(buf.subarray(12, 28));
      return Buffer.concat([d.update(buf.subarray(28)), d.final()]).toString('utf8');
    },
  };
}

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-secrets-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

describe('EncryptedSecretStore', () => {
  it('round-trips values across instances and never writes them in plain text', () => {
    const cipher = aesCipher();
    const store = new EncryptedSecretStore(home, cipher);
    expect(store.kind).toBe('keychain');
    store.set('providerKey', 'sk-live-1234567890abcdef');
    const raw = fs.readFileSync(path.join(home, KEYCHAIN_FILE), 'utf8');
    expect(raw).not.toContain('sk-live');
    expect(raw).not.toContain('1234567890abcdef');
    if (process.platform !== 'win32') expect(fs.statSync(path.join(home, KEYCHAIN_FILE)).mode & 0o777).toBe(0o600);
    expect(new EncryptedSecretStore(home, cipher).get('providerKey')).toBe('sk-live-1234567890abcdef');
    store.delete('providerKey');
    expect(new EncryptedSecretStore(home, cipher).get('providerKey')).toBeUndefined();
  });

  it('reports a value another keychain cannot decrypt as missing, with a message', () => {
    new EncryptedSecretStore(home, aesCipher()).set('providerKey', 'sk-a');
    const errors: string[] = [];
    const other = new EncryptedSecretStore(home, aesCipher(), (m) => errors.push(m));
    expect(other.get('providerKey')).toBeUndefined();
    expect(errors[0]).toMatch(/could not decrypt the saved providerKey.*Enter it again/);
  });

  it('starts empty, with a message, when the file is corrupt', () => {
    fs.writeFileSync(path.join(home, KEYCHAIN_FILE), '{not json');
    const errors: string[] = [];
    const store = new EncryptedSecretStore(home, aesCipher(), (m) => errors.push(m));
    expect(store.names()).toEqual([]);
    expect(errors[0]).toMatch(/not valid JSON/);
  });
});

describe('migratePlainSecrets', () => {
  it('moves values from the plain 0600 file into the keychain store and deletes the file', () => {
    const plain = new FileSecretStore(home);
    plain.set('providerKey', 'sk-plain-key');
    plain.set('gatewaySecret', 'g-1');
    const cipher = aesCipher();
    const store = new EncryptedSecretStore(home, cipher);
    expect(migratePlainSecrets(path.join(home, 'secrets.json'), store).sort()).toEqual(['gatewaySecret', 'providerKey']);
    expect(fs.existsSync(path.join(home, 'secrets.json'))).toBe(false);
    const reopened = new EncryptedSecretStore(home, cipher);
    expect(reopened.get('providerKey')).toBe('sk-plain-key');
    expect(reopened.get('gatewaySecret')).toBe('g-1');
  });

  it('keeps a value already in the keychain and does nothing without a plain file', () => {
    const store = new EncryptedSecretStore(home, aesCipher());
    store.set('providerKey', 'sk-newer');
    expect(migratePlainSecrets(path.join(home, 'secrets.json'), store)).toEqual([]);
    fs.writeFileSync(path.join(home, 'secrets.json'), JSON.stringify({ providerKey: 'sk-older' }));
    migratePlainSecrets(path.join(home, 'secrets.json'), store);
    expect(store.get('providerKey')).toBe('sk-newer');
  });
});
