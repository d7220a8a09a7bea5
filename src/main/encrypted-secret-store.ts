// A SecretStore whose values are encrypted by the OS keychain before they touch the disk.
// The cipher is Electron's safeStorage in the app (src/main/secrets-safe-storage.ts); this file has no
// electron import so it is tested in plain Node with a real cipher.
import fs from 'node:fs';
import path from 'node:path';
import type { SecretStore } from '../core/config/secrets';
import { writeJsonAtomic } from '../core/config/atomic-file';
import { HOME_FILES } from '../core/config/home-layout';

/** The two safeStorage calls we use. */
export interface StringCipher {
  encryptString(plain: string): Buffer;
  decryptString(encrypted: Buffer): string;
}

export const KEYCHAIN_FILE = HOME_FILES.keychainSecrets;

/** `<home>/secrets.keychain.json`: `{ name: base64(ciphertext) }`, mode 0600. Plain text never hits the disk. */
export class EncryptedSecretStore implements SecretStore {
  readonly kind = 'keychain' as const;
  readonly file: string;
  private values: Record<string, string>;

  constructor(
    home: string,
    private readonly cipher: StringCipher,
    private readonly onError: (msg: string) => void = () => {},
  ) {
    this.file = path.join(home, KEYCHAIN_FILE);
    this.values = this.read();
  }

  private read(): Record<string, string> {
    let raw: string;
    try {
      raw = fs.readFileSync(this.file, 'utf8');
    } catch {
      return {};
    }
    try {
      const parsed: unknown = JSON.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
      }
    } catch {
      /* reported below */
    }
    this.onError(`${this.file} is not valid JSON; the saved secrets cannot be read. Enter the provider key again.`);
    return {};
  }

  get(name: string): string | undefined {
    const stored = this.values[name];
    if (stored === undefined) return undefined;
    try {
      return this.cipher.decryptString(Buffer.from(stored, 'base64'));
    } catch (err) {
      // A different OS user, a reset keychain or a copied home folder: the value is lost, not wrong.
      this.onError(`The OS keychain could not decrypt the saved ${name} (${err instanceof Error ? err.message : String(err)}). Enter it again.`);
      return undefined;
    }
  }

  set(name: string, value: string): void {
    const encrypted = this.cipher.encryptString(value).toString('base64');
    this.values = { ...this.values, [name]: encrypted };
    this.save();
  }

  delete(name: string): void {
    if (!(name in this.values)) return;
    const { [name]: _gone, ...rest } = this.values;
    this.values = rest;
    this.save();
  }

  names(): string[] {
    return Object.keys(this.values);
  }

  private save(): void {
    writeJsonAtomic(this.file, this.values);
  }
}

/**
 * Moves every value of a plain-file store into the keychain store, then deletes the plain file, so a key
 * saved while no keychain was available does not stay in plain text once one is. Returns the names moved.
 */
export function migratePlainSecrets(plainFile: string, target: SecretStore): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(plainFile, 'utf8'));
  } catch {
    return [];
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return [];
  const moved: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string') continue;
    if (target.get(name) === undefined) target.set(name, value);
    moved.push(name);
  }
  fs.rmSync(plainFile, { force: true });
  return moved;
}
