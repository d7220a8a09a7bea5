// Named credentials kept as hashes in a JSON file of the home (gateway keys, fleet tokens). A credential is
// 32 random bytes shown once when made; only its SHA-256 is kept, so a plain hash is enough, and a lookup
// compares against every stored hash in constant time. Several holders may share the file (the CLI, the
// console, the running agent): each re-reads it when it changed on disk, so a credential made or revoked
// anywhere counts at once; the last-use times one holder saw are kept across those re-reads.
import crypto from 'node:crypto';
import { z } from 'zod';
import { SharedJsonFile } from './shared-json-file';

/** One stored credential: its name, the SHA-256 of the credential (hex), when it was made and last used. */
export const storedCredential = z.object({
  name: z.string(),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  createdAt: z.number(),
  lastUsedAt: z.number().optional(),
});
export type StoredCredential = z.infer<typeof storedCredential>;

/** Letters, digits, dot, dash or underscore, 1 to 64. */
export const CREDENTIAL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** SHA-256 of a credential, hex: what the file keeps and what a credential is known by. */
export function credentialHash(secret: string): string {
  return crypto.createHash('sha256').update(secret).digest('hex');
}

/** A new credential: `prefix` and 32 random bytes. */
export function newCredential(prefix: string): string {
  return prefix + crypto.randomBytes(32).toString('base64url');
}

export class CredentialFile<T extends StoredCredential> {
  private entries: T[] = [];
  private readonly file: SharedJsonFile<T[]>;

  constructor(file: string, schema: z.ZodType<T[]>) {
    this.file = new SharedJsonFile(file, schema, () => []);
    this.refresh();
  }

  /** Re-reads the file if another holder changed it; last-use times seen here are kept. */
  private refresh(): void {
    const { value, changed } = this.file.read();
    if (!changed) return;
    const used = new Map(this.entries.map((e) => [e.hash, e.lastUsedAt]));
    this.entries = value.map((e) => {
      const last = Math.max(e.lastUsedAt ?? 0, used.get(e.hash) ?? 0);
      return last > 0 ? { ...e, lastUsedAt: last } : e;
    });
  }

  /** Every stored credential, as the file has them now. */
  list(): readonly T[] {
    this.refresh();
    return this.entries;
  }

  /** Whether a credential of this name is stored. */
  has(name: string): boolean {
    return this.list().some((e) => e.name === name);
  }

  add(entry: T): void {
    this.refresh();
    this.entries = [...this.entries, entry];
    this.file.write(this.entries);
  }

  /** Removes the credential of this name; false when there was none. */
  remove(name: string): boolean {
    this.refresh();
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.name !== name);
    if (this.entries.length === before) return false;
    this.file.write(this.entries);
    return true;
  }

  /** The stored credential `secret` is (its last use set to now), else undefined. Constant time per stored hash. */
  match(secret: string): T | undefined {
    this.refresh();
    const h = Buffer.from(credentialHash(secret), 'hex');
    let found: T | undefined;
    for (const e of this.entries) if (crypto.timingSafeEqual(h, Buffer.from(e.hash, 'hex'))) found = e;
    if (found) found.lastUsedAt = Date.now();
    return found;
  }

  /** Whether a credential with this hash is still stored (revocations by other holders count). */
  holds(hash: string): boolean {
    return this.list().some((e) => e.hash === hash);
  }
}
