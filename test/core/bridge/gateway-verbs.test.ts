// The gateway keys' verbs, on a real key file and a stand-in of the owner's gate: a key is minted only once
// the owner approved it, a taken name is refused before the owner is asked, and each change is told.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatewayKeyVerbs } from '../../../src/core/bridge/gateway-verbs';
import { GatewayKeys } from '../../../src/core/gateway/keys';
import { BridgeError } from '../../../src/shared/bridge-error';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-gateway-verbs-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function verbs() {
  const asked: string[] = [];
  let changes = 0;
  const keys = new GatewayKeys(home);
  const v = gatewayKeyVerbs({
    keys,
    owner: {
      requireOwner: (kind, name, approvalId) => {
        asked.push(`${kind} ${name}`);
        if (approvalId !== 'approved') throw new BridgeError('OWNER_CONFIRMATION_REQUIRED', 'ask the owner');
      },
    },
    changed: () => changes++,
  });
  return { v, keys, asked, changes: () => changes };
}

describe('gateway key verbs', () => {
  it('mints a key only with the owner approval, once, and says the snapshot changed', async () => {
    const { v, asked, changes } = verbs();
    await expect(Promise.resolve().then(() => v['gateway.keys.create']({ name: 'app' }))).rejects.toMatchObject({ code: 'OWNER_CONFIRMATION_REQUIRED' });
    expect(await v['gateway.keys.list']({})).toEqual([]);
    const made = await v['gateway.keys.create']({ name: 'app', grant: 'approved' });
    expect(made.name).toBe('app');
    expect(made.key.length).toBeGreaterThan(16);
    expect((await v['gateway.keys.list']({})).map((k) => k.name)).toEqual(['app']);
    expect(asked).toEqual(['gateway_key app', 'gateway_key app']);
    expect(changes()).toBe(1);
  });

  it('refuses a taken name before asking the owner, and an unknown key on revoke', async () => {
    const { v, keys, asked } = verbs();
    keys.create('app');
    await expect(Promise.resolve().then(() => v['gateway.keys.create']({ name: 'app', grant: 'approved' }))).rejects.toMatchObject({ code: 'already_exists' });
    expect(asked).toEqual([]);
    await expect(Promise.resolve().then(() => v['gateway.keys.revoke']({ name: 'other' }))).rejects.toMatchObject({ code: 'not_found' });
    expect(await v['gateway.keys.revoke']({ name: 'app' })).toEqual([]);
  });
});
