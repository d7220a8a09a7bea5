// What the owner does for a change the console may not make alone (OWNER_CONFIRMATION_REQUIRED): approve it
// through the agent's own channel (the one the desktop dialog and the terminal use), as tests of other
// features need a gateway key or an outside engine without walking the approval each time.
import type { Agent } from '../../src/core/agent';
import { BridgeError, type OwnerConfirmation } from '../../src/shared/bridge-error';

/** The approval a call was refused with (throws when it was not refused for that). */
export async function refusedForOwner(p: Promise<unknown>): Promise<OwnerConfirmation> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof BridgeError) || e.code !== 'OWNER_CONFIRMATION_REQUIRED' || !e.confirmation)
    throw new Error(`expected OWNER_CONFIRMATION_REQUIRED, got ${e instanceof Error ? e.message : String(e)}`);
  return e.confirmation;
}

/** A fleet token as the owner mints it: asked for in the console, approved, then created. */
export async function createFleetToken(agent: Agent, name: string): Promise<{ name: string; token: string; scope: 'read' }> {
  const c = await refusedForOwner(agent.invoke('fleet.tokens.create', { name }));
  await agent.approvals.decide(c.code, 'approve', 'test');
  return (await agent.invoke('fleet.tokens.create', { name, grant: c.grant! })) as { name: string; token: string; scope: 'read' };
}

/** A gateway key as the owner mints it: asked for in the console, approved, then created. */
export async function createGatewayKey(agent: Agent, name: string): Promise<{ name: string; key: string }> {
  const c = await refusedForOwner(agent.invoke('gateway.keys.create', { name }));
  await agent.approvals.decide(c.code, 'approve', 'test');
  return (await agent.invoke('gateway.keys.create', { name, grant: c.grant! })) as { name: string; key: string };
}
