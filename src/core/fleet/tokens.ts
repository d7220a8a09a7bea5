// Fleet tokens: what another rig's console presents to read this rig (its fleet API), made for that
// purpose by `swan-provider fleet token create` or the Fleet page. Scope `read` only: a fleet token
// opens no console session, no bridge and no mutating route (console-route.ts, fleet-api.ts). Shown once
// when made; only its SHA-256 is kept, in <home>/fleet-tokens.json (0600). The CLI, the console and the
// running agent may each hold the file: every reader re-reads it when it changed on disk, so a token
// revoked anywhere stops working at once.
import { z } from 'zod';
import { CodedError } from '../../shared/bridge-error';
import type { FleetErrorCode, FleetScope, FleetTokenView } from '../../shared/fleet';
import { CREDENTIAL_NAME, CredentialFile, credentialHash, newCredential, storedCredential } from '../config/credential-file';
import { homePath } from '../config/home-layout';

export const FLEET_TOKEN_PREFIX = 'swan-fleet-';

const storedToken = storedCredential.extend({ scope: z.literal('read') });
const fileSchema = z.array(storedToken);
type Stored = z.infer<typeof storedToken>;

export class FleetError extends CodedError<FleetErrorCode> {
  override name = 'FleetError';
}

export class FleetTokens {
  private readonly tokens: CredentialFile<Stored>;

  constructor(home: string) {
    this.tokens = new CredentialFile(homePath(home, 'fleetTokens'), fileSchema);
  }

  /** Makes a token; returns it in full (the only time it is visible). */
  create(name: string, scope: FleetScope = 'read'): { name: string; token: string; scope: FleetScope } {
    if (!CREDENTIAL_NAME.test(name))
      throw new FleetError('fleet_token_name_invalid', 'Token names use letters, digits, dot, dash or underscore (1-64).', 'name');
    if (this.tokens.has(name))
      throw new FleetError('fleet_token_name_taken', `A fleet token named "${name}" exists already; revoke it first or pick another name.`, 'name');
    const token = newCredential(FLEET_TOKEN_PREFIX);
    this.tokens.add({ name, hash: credentialHash(token), scope, createdAt: Date.now() });
    return { name, token, scope };
  }

  revoke(name: string): boolean {
    return this.tokens.remove(name);
  }

  list(): FleetTokenView[] {
    return this.tokens.list().map((t) => ({ name: t.name, scope: t.scope, createdAt: t.createdAt, ...(t.lastUsedAt ? { lastUsedAt: t.lastUsedAt } : {}) }));
  }

  /** The token's name and scope when it is valid, else undefined (constant time per stored token). */
  verify(token: string | undefined): { name: string; scope: FleetScope } | undefined {
    if (!token?.startsWith(FLEET_TOKEN_PREFIX)) return undefined;
    const found = this.tokens.match(token);
    return found ? { name: found.name, scope: found.scope } : undefined;
  }
}
