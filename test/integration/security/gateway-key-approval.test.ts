// Minting a gateway key needs the owner: the console's call is refused with an approval, the key is
// created only by the call that follows an approval given outside the console, once, for that name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayKeyView } from '../../../src/shared/views/settings';
import { refusedForOwner } from '../../support/approvals';
import { startStack, type Stack } from '../../support/stack';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ hub: false });
});
afterAll(async () => {
  await stack?.close();
});

describe('gateway.keys.create', () => {
  it('is refused until the owner approves, then works once for that name', async () => {
    const c = await refusedForOwner(stack.agent.invoke('gateway.keys.create', { name: 'app' }));
    expect(c.kind).toBe('gateway_key');
    expect(await stack.agent.invoke('gateway.keys.list', {})).toEqual([]);
    // An approval id that was not approved, or is for another name, mints nothing.
    await expect(stack.agent.invoke('gateway.keys.create', { name: 'app', grant: c.grant! })).rejects.toMatchObject({ code: 'OWNER_CONFIRMATION_REQUIRED' });
    const again = await refusedForOwner(stack.agent.invoke('gateway.keys.create', { name: 'app' }));
    await stack.agent.approvals.decide(again.code, 'approve', 'test');
    await expect(stack.agent.invoke('gateway.keys.create', { name: 'other', grant: again.grant! })).rejects.toMatchObject({
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    const made = (await stack.agent.invoke('gateway.keys.create', { name: 'app', grant: again.grant! })) as { key: string };
    expect(made.key).toMatch(/^sk-swan-/);
    expect(((await stack.agent.invoke('gateway.keys.list', {})) as GatewayKeyView[]).map((k) => k.name)).toEqual(['app']);
    await stack.agent.invoke('gateway.keys.revoke', { name: 'app' });
    // The same approval does not mint a second key.
    await expect(stack.agent.invoke('gateway.keys.create', { name: 'app', grant: again.grant! })).rejects.toMatchObject({
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    expect(await stack.agent.invoke('gateway.keys.list', {})).toEqual([]);
  });
});

describe('fleet.tokens.create', () => {
  it('is refused until the owner approves (a read token outlives the console session), then works once for that name', async () => {
    const c = await refusedForOwner(stack.agent.invoke('fleet.tokens.create', { name: 'office' }));
    expect(c.kind).toBe('fleet_token');
    expect(await stack.agent.invoke('fleet.tokens.list', {})).toEqual([]);
    await expect(stack.agent.invoke('fleet.tokens.create', { name: 'office', grant: c.grant! })).rejects.toMatchObject({ code: 'OWNER_CONFIRMATION_REQUIRED' });
    const again = await refusedForOwner(stack.agent.invoke('fleet.tokens.create', { name: 'office' }));
    await stack.agent.approvals.decide(again.code, 'approve', 'test');
    // A gateway-key approval is not a fleet-token approval, and an approval names one token.
    await expect(stack.agent.invoke('gateway.keys.create', { name: 'office', grant: again.grant! })).rejects.toMatchObject({
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    await expect(stack.agent.invoke('fleet.tokens.create', { name: 'other', grant: again.grant! })).rejects.toMatchObject({
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
    const made = (await stack.agent.invoke('fleet.tokens.create', { name: 'office', grant: again.grant! })) as { token: string; scope: string };
    expect(made.scope).toBe('read');
    // A name in use is said at once, before any approval is asked for.
    await expect(stack.agent.invoke('fleet.tokens.create', { name: 'office' })).rejects.toMatchObject({ code: 'already_exists' });
    await stack.agent.invoke('fleet.tokens.revoke', { name: 'office' });
    await expect(stack.agent.invoke('fleet.tokens.create', { name: 'office', grant: again.grant! })).rejects.toMatchObject({
      code: 'OWNER_CONFIRMATION_REQUIRED',
    });
  });
});
