// The local gateway started by the Agent: owner traffic shares the scheduler and lands in the
// request book and the ledger as "local".
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { summarizeTrace } from '../../support/traces';
import { ledgerRows, registered, freePort, requests, startStack, until, type Stack } from '../../support/stack';
import { createGatewayKey } from '../../support/approvals';

let stack: Stack | undefined;

afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('agent + gateway', () => {
  it('starts the gateway from the settings, serves a seed 002 chat with a console-made key, and records it as local', async () => {
    stack = await startStack();
    await registered(stack);
    expect(stack.agent.snapshot().gateway.running).toBe(false);
    const { key } = await createGatewayKey(stack.agent, 'script');
    const saved = (await stack.agent.invoke('settings.save', { patch: { gatewayEnabled: true, gatewayListen: `127.0.0.1:${await freePort()}` } })) as {
      ok: boolean;
    };
    expect(saved.ok).toBe(true);
    const snap = stack.agent.snapshot();
    expect(snap.gateway).toMatchObject({ enabled: true, running: true, keys: 1 });
    const model = stack.engines[0]!.modelIds[0]!;
    const ws = new WebSocket(`ws://${snap.gateway.listen}/v1/ws?apiKey=${key}`);
    const text = await new Promise<string>((resolve, reject) => {
      let out = '';
      ws.on('open', () => ws.send(JSON.stringify({ type: 'chat.message', model, messages: [{ role: 'user', content: 'hi' }], stream: true })));
      ws.on('message', (d) => {
        const m = JSON.parse(d.toString()) as { type: string; content?: string; done?: boolean; message?: string };
        if (m.type === 'error') reject(new Error(m.message));
        if (m.type === 'chat.chunk') {
          out += m.content ?? '';
          if (m.done) resolve(out);
        }
      });
      ws.on('error', reject);
    });
    ws.close();
    expect(text).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    await until(async () => (await requests(stack!.agent, 5)).some((r) => r.source === 'local' && r.status === 'ok'), 'local request finished');
    await until(async () => (await ledgerRows(stack!.agent)).some((r) => r.source === 'local'), 'ledger row');
    // a wrong key is refused
    const bad = new WebSocket(`ws://${snap.gateway.listen}/v1/ws?apiKey=sk-swan-wrong`);
    const refused = await new Promise<string>((resolve) => {
      bad.on('message', (d) => resolve(d.toString()));
      bad.on('unexpected-response', (_q, res) => resolve(`HTTP ${res.statusCode}`));
      bad.on('error', (e) => resolve(e.message));
    });
    expect(JSON.parse(refused)).toMatchObject({ type: 'error', code: 'auth_error', reason: 'key_unknown' });
    bad.terminate();
    await stack.agent.invoke('settings.save', { patch: { gatewayEnabled: false } });
    expect(stack.agent.snapshot().gateway.running).toBe(false);
  });
});
