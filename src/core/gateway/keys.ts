// Keys for the local gateway: named credentials in <home>/gateway-keys.json, kept as hashes and shared
// by every holder of the file (config/credential-file.ts), so a key created or revoked anywhere (the CLI,
// the console's settings) takes effect at once in the running gateway.
import { z } from 'zod';
import type { GatewayKeyView } from '../../shared/views/settings';
import { homePath } from '../config/home-layout';
import { CREDENTIAL_NAME, CredentialFile, credentialHash, newCredential, storedCredential } from '../config/credential-file';

const fileSchema = z.array(storedCredential);
type Stored = z.infer<typeof storedCredential>;

export const KEY_PREFIX = 'sk-swan-';

/** Why GatewayKeys.create refused: a name outside [A-Za-z0-9_.-]{1,64}, or one already in use. */
export type GatewayKeyErrorCode = 'key_name_invalid' | 'key_name_taken';

export class GatewayKeyError extends Error {
  constructor(
    readonly code: GatewayKeyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayKeyError';
  }
}

/** The id of a key (what streams and resume tokens are bound to): its SHA-256, hex. */
export function keyIdOf(key: string): string {
  return credentialHash(key);
}

/** A key as the gateway knows it: its name (for people) and its id, the key's SHA-256 (for binding). */
export interface KeyIdentity {
  name: string;
  id: string;
}

export class GatewayKeys {
  private readonly keys: CredentialFile<Stored>;
  /** Called with every full key this process sees (created here, or presented and valid): for log redaction. */
  onKnownKey?: (key: string) => void;

  constructor(home: string) {
    this.keys = new CredentialFile(homePath(home, 'gatewayKeys'), fileSchema);
  }

  /** Creates a key; returns it in full (the only time it is visible). */
  create(name: string): { name: string; key: string } {
    if (!CREDENTIAL_NAME.test(name)) throw new GatewayKeyError('key_name_invalid', 'Key names use letters, digits, dot, dash or underscore (1-64).');
    if (this.keys.has(name)) throw new GatewayKeyError('key_name_taken', `A key named "${name}" already exists; revoke it first or pick another name.`);
    const key = newCredential(KEY_PREFIX);
    this.keys.add({ name, hash: keyIdOf(key), createdAt: Date.now() });
    this.onKnownKey?.(key);
    return { name, key };
  }

  revoke(name: string): boolean {
    return this.keys.remove(name);
  }

  list(): GatewayKeyView[] {
    return this.keys.list().map((k) => ({ name: k.name, createdAt: k.createdAt, ...(k.lastUsedAt ? { lastUsedAt: k.lastUsedAt } : {}) }));
  }

  /** The key's name when it is valid, else undefined. Constant time per stored key. */
  verify(key: string | undefined | null): string | undefined {
    return this.identify(key)?.name;
  }

  /** The key's name and id when it is valid, else undefined. Constant time per stored key. */
  identify(key: string | undefined | null): KeyIdentity | undefined {
    if (!key) return undefined;
    const found = this.keys.match(key);
    if (!found) return undefined;
    this.onKnownKey?.(key);
    return { name: found.name, id: found.hash };
  }

  /** Whether the key with this id is still valid (re-reads the file if it changed: revocations elsewhere count). */
  isValid(id: string): boolean {
    return this.keys.holds(id);
  }

  get size(): number {
    return this.keys.list().length;
  }
}
