// Keys for the local gateway. A key is shown once when created; only its SHA-256 is kept
// (keys are 32 random bytes, so a plain hash is enough). Lookups compare in constant time.
// Several instances may share one file (the CLI, the console's settings, the running gateway): each
// re-reads it when it changed on disk, so a key created or revoked anywhere takes effect at once.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import type { GatewayKeyView } from '../../shared/views/settings';
import { homePath } from '../config/home-layout';
import { writeJsonAtomic } from '../config/atomic-file';

const fileSchema = z.array(z.object({ name: z.string(), hash: z.string().regex(/^[0-9a-f]{64}$/), createdAt: z.number(), lastUsedAt: z.number().optional() }));
type Stored = z.infer<typeof fileSchema>[number];

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

function hashKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key).digest();
}

/** The id of a key (what streams and resume tokens are bound to): its SHA-256, hex. */
export function keyIdOf(key: string): string {
  return hashKey(key).toString('hex');
}

/** A key as the gateway knows it: its name (for people) and its id, the key's SHA-256 (for binding). */
export interface KeyIdentity {
  name: string;
  id: string;
}

export class GatewayKeys {
  private keys: Stored[] = [];
  private readonly file: string;
  /** Called with every full key this process sees (created here, or presented and valid): for log redaction. */
  onKnownKey?: (key: string) => void;
  /** What the file looked like when last read or written ("" = never). */
  private stamp = '';

  constructor(home: string) {
    this.file = homePath(home, 'gatewayKeys');
    this.refresh();
  }

  private fileStamp(): string {
    try {
      const st = fs.statSync(this.file);
      return `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      return 'absent';
    }
  }

  /** Re-reads the file if another instance changed it; last-use times seen here are kept. */
  private refresh(): void {
    const stamp = this.fileStamp();
    if (stamp === this.stamp) return;
    const used = new Map(this.keys.map((k) => [k.hash, k.lastUsedAt]));
    this.keys = GatewayKeys.read(this.file).map((k) => {
      const last = Math.max(k.lastUsedAt ?? 0, used.get(k.hash) ?? 0);
      return last > 0 ? { ...k, lastUsedAt: last } : k;
    });
    this.stamp = stamp;
  }

  private static read(file: string): Stored[] {
    try {
      const r = fileSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
      return r.success ? r.data : [];
    } catch {
      return [];
    }
  }

  private save(): void {
    writeJsonAtomic(this.file, this.keys);
    this.stamp = this.fileStamp();
  }

  /** Creates a key; returns it in full (the only time it is visible). */
  create(name: string): { name: string; key: string } {
    this.refresh();
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) throw new GatewayKeyError('key_name_invalid', 'Key names use letters, digits, dot, dash or underscore (1-64).');
    if (this.keys.some((k) => k.name === name)) throw new GatewayKeyError('key_name_taken', `A key named "${name}" already exists; revoke it first or pick another name.`);
    const key = KEY_PREFIX + crypto.randomBytes(32).toString('base64url');
    this.keys = [...this.keys, { name, hash: keyIdOf(key), createdAt: Date.now() }];
    this.save();
    this.onKnownKey?.(key);
    return { name, key };
  }

  revoke(name: string): boolean {
    this.refresh();
    const before = this.keys.length;
    this.keys = this.keys.filter((k) => k.name !== name);
    if (this.keys.length === before) return false;
    this.save();
    return true;
  }

  list(): GatewayKeyView[] {
    this.refresh();
    return this.keys.map((k) => ({ name: k.name, createdAt: k.createdAt, ...(k.lastUsedAt ? { lastUsedAt: k.lastUsedAt } : {}) }));
  }

  /** The key's name when it is valid, else undefined. Constant time per stored key. */
  verify(key: string | undefined | null): string | undefined {
    return this.identify(key)?.name;
  }

  /** The key's name and id when it is valid, else undefined. Constant time per stored key. */
  identify(key: string | undefined | null): KeyIdentity | undefined {
    if (!key) return undefined;
    this.refresh();
    const h = hashKey(key);
    let found: Stored | undefined;
    for (const k of this.keys) if (crypto.timingSafeEqual(h, Buffer.from(k.hash, 'hex'))) found = k;
    if (!found) return undefined;
    found.lastUsedAt = Date.now();
    this.onKnownKey?.(key);
    return { name: found.name, id: found.hash };
  }

  /** Whether the key with this id is still valid (re-reads the file if it changed: revocations elsewhere count). */
  isValid(id: string): boolean {
    this.refresh();
    return this.keys.some((k) => k.hash === id);
  }

  get size(): number {
    this.refresh();
    return this.keys.length;
  }
}
