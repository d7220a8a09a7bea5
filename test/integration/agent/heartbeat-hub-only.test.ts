// The heartbeat's request figures are the hub's (HUB-PROTOCOL.md: "Request counters in the heartbeat count hub
// traffic only; the local gateway's requests are not the hub's"): the owner's own apps through the gateway, the
// console's test prompt and the agent's own warmups leave total_requests as it was; a hub request moves it.
// Real dev hub, real test engine, the real Agent with its gateway.
import { afterEach, describe, expect, it } from 'vitest';
import { createGatewayKey } from '../../support/approvals';
import { call, chat, freePort, registered, requests, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** total_requests of the first heartbeat sent after `since` (ms). */
async function totalAfter(s: Stack, since: number): Promise<number> {
  let found: number | undefined;
  await until(() => {
    const hb = s.hub!.received.find(
      (m) => m.type === 'heartbeat' && typeof m.payload.timestamp === 'number' && (m.payload.timestamp as number) * 1000 >= since,
    );
    found = hb ? (hb.payload.metrics as Record<string, number>).total_requests : undefined;
    return found !== undefined;
  }, 'a heartbeat after the requests');
  return found!;
}

describe('heartbeat request metrics', () => {
  it('count hub traffic only, not the gateway, the test prompt or a warmup', async () => {
    stack = await startStack();
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const { key } = await createGatewayKey(stack.agent, 'app');
    const listen = `127.0.0.1:${await freePort()}`;
    await stack.agent.invoke('settings.save', { patch: { gatewayEnabled: true, gatewayListen: listen } });
    const res = await fetch(`http://${listen}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await call(stack.agent, 'models.try', { model, prompt: 'Say hello.' });
    await call(stack.agent, 'models.warmup', { model });
    await until(async () => (await requests(stack!.agent)).filter((r) => r.status === 'ok').length === 3, 'three local requests done');
    expect((await requests(stack.agent)).map((r) => r.purpose).sort()).toEqual(['gateway', 'try', 'warmup']);
    // The heartbeat's timestamp is in whole seconds: wait for one stamped after the requests ended.
    const local = Date.now() + 1000;
    expect(await totalAfter(stack, local)).toBe(0);

    expect((await chat(stack.hub!, { model, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    await until(async () => (await requests(stack!.agent)).some((r) => r.purpose === 'hub' && r.status === 'ok'), 'the hub request done');
    expect(await totalAfter(stack, Date.now() + 1000)).toBe(1);
  });
});
