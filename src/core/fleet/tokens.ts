// Fleet tokens: what another rig's console presents to read this rig (its fleet API), made for that
// purpose by `swan-provider fleet token create` or the Fleet page. Scope `read` only: a fleet token
// opens no console session, no bridge and no mutating route (console-route.ts, fleet-api.ts). Shown once
// when made; only its SHA-256 is kept, in <home>/fleet-tokens.json (0600). The CLI, the console and the
// running agent may each hold the file: every reader re-reads it when it changed on disk, so a token
// revoked anywhere stops working at once.
import crypto from 'node:crypto';
import { z } from 'zod';
import { CodedError } from '../../shared/bridge-error';
import type { FleetErrorCode, FleetScope, FleetTokenView } from '../../shared/fleet';
import { SharedJsonFile } from '../config/shared-json-file';
import { homePath } from '../config/home-layout';

export const FLEET_TOKEN_PREFIX = 'swan-fleet-';
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const fileSchema = z.array(
  z.object({ name: z.string(), hash: z.string().regex(/^[0-9a-f]{64}$/), scope: z.literal('read'), createdAt: z.number(), lastUsedAt: z.number().optional() }),
);
type Stored = z.infer<typeof fileSchema>[number];

export class FleetError extends CodedError<FleetErrorCode> {
  override name = 'FleetError';
}

function hash(token: string): Buffer {
  return crypto.createHash('sha256').update(token).digest();
}

export class FleetTokens {
  private tokens: Stored[] = [];
  private readonly file: SharedJsonFile<Stored[]>;

  constructor(home: string) {
    this.file = new SharedJsonFile(homePath(home, 'fleetTokens'), fileSchema, () => []);
    this.refresh();
  }

  /** Re-reads the file if another holder changed it; last-use times seen here are kept. */
  private refresh(): void {
    const { value, changed } = this.file.read();
    if (!changed) return;
    const used = new Map(this.tokens.map((t) => [t.hash, t.lastUsedAt]));
    this.tokens = value.map((t) => {
      const last = Math.max(t.lastUsedAt ?? 0, used.get(t.hash) ?? 0);
      return last > 0 ? { ...t, lastUsedAt: last } : t;
    });
  }

  private save(): void {
    this.file.write(this.tokens);
  }

  /** Makes a token; returns it in full (the only time it is visible). */
  create(name: string, scope: FleetScope = 'read'): { name: string; token: string; scope: FleetScope } {
    this.refresh();
    if (!NAME.test(name)) throw new FleetError('fleet_token_name_invalid', 'Token names use letters, digits, dot, dash or underscore (1-64).', 'name');
    if (this.tokens.some((t) => t.name === name)) throw new FleetError('fleet_token_name_taken', `A fleet token named "${name}" exists already; revoke it first or pick another name.`, 'name');
    const token = FLEET_TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
    this.tokens = [...this.tokens, { name, hash: hash(token).toString('hex'), scope, createdAt: Date.now() }];
    this.save();
    return { name, token, scope };
  }

  revoke(name: string): boolean {
    this.refresh();
    const before = this.tokens.length;
    this.tokens = this.tokens.filter((t) => t.name !== name);
    if (this.tokens.length === before) return false;
    this.save();
    return true;
  }

  list(): FleetTokenView[] {
    this.refresh();
    return this.tokens.map((t) => ({ name: t.name, scope: t.scope, createdAt: t.createdAt, ...(t.lastUsedAt ? { lastUsedAt: t.lastUsedAt } : {}) }));
  }

  /** The token's name and scope when it is valid, else undefined (constant time per stored token). */
  verify(token: string | undefined): { name: string; scope: FleetScope } | undefined {
    if (!token?.startsWith(FLEET_TOKEN_PREFIX)) return undefined;
    this.refresh();
    const h = hash(token);
    let found: Stored | undefined;
    for (const t of this.tokens) if (crypto.timingSafeEqual(h, Buffer.from(t.hash, 'hex'))) found = t;
    if (!found) return undefined;
    found.lastUsedAt = Date.now();
    return { name: found.name, scope: found.scope };
  }
}
