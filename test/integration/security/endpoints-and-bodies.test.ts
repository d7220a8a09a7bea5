// Item 13: engines.addEndpoint takes only http(s) URLs without credentials (no blind GETs to other
// schemes, no user:pass@ kept in settings) and keeps every added endpoint in the visible engine list;
// HTTP /v1/chat/completions forwards only allow-listed body fields, like the WebSocket dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../../src/shared/types';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { startStack, type Stack } from '../../support/stack';
import { refusedForOwner } from '../../support/approvals';
import { MODEL, rigPerTest } from '../../support/gateway/rig';

describe('engines.addEndpoint', () => {
  let stack: Stack;
  let extra: TestEngine;
  beforeAll(async () => {
    stack = await startStack({ hub: false, agent: { Discovery: true } });
    extra = await startTestEngine({ engineType: 'vllm' });
  });
  afterAll(async () => {
    await extra?.close();
    await stack?.close();
  });

  it('refuses other schemes and URLs with credentials, and probes nothing for them', async () => {
    const before = extra.requests.length;
    for (const url of [
      'file:///etc/passwd',
      'gopher://127.0.0.1:70/x',
      'ftp://127.0.0.1/',
      'javascript:alert(1)',
      `http://user:pass@127.0.0.1:${new URL(extra.url).port}`,
      `http://:secret@127.0.0.1:1`,
      'http://',
    ]) {
      await expect(stack.agent.invoke('engines.addEndpoint', { url }), url).rejects.toMatchObject({ code: 'invalid_args' });
    }
    expect(extra.requests.length).toBe(before);
    expect(JSON.stringify(stack.agent.settings.get())).not.toContain('pass');
  });

  it('link-local, cloud-metadata and unspecified addresses are refused in every spelling, before any probe', async () => {
    const settings = JSON.stringify(stack.agent.settings.get());
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://0xA9FEA9FE/',
      'http://2852039166:80',
      'http://[::ffff:169.254.169.254]/',
      'http://[fe80::1]:8000',
      'http://100.100.100.200',
      'http://0.0.0.0:8000',
    ]) {
      await expect(stack.agent.invoke('engines.addEndpoint', { url }), url).rejects.toMatchObject({ code: 'address_refused', field: 'url' });
    }
    expect(JSON.stringify(stack.agent.settings.get())).toBe(settings);
  });

  it('an address outside this machine and the LAN waits for the owner; nothing is probed or kept until approved', async () => {
    const c = await refusedForOwner(stack.agent.invoke('engines.addEndpoint', { url: 'http://192.0.2.10:8000' }));
    expect(c).toMatchObject({ kind: 'engine_endpoint', hosts: ['192.0.2.10:8000'] });
    expect(JSON.stringify(stack.agent.settings.get())).not.toContain('192.0.2.10');
    await stack.agent.approvals.decide(c.code, 'deny', 'test');
    expect(JSON.stringify(stack.agent.settings.get())).not.toContain('192.0.2.10');
  });

  it('an accepted endpoint is probed once and stays in the visible list, marked as added by the owner', async () => {
    const list = (await stack.agent.invoke('engines.addEndpoint', { url: `${extra.url}/v1` })) as EngineInfo[];
    expect(list.find((e) => e.url === extra.url)).toMatchObject({ origin: 'owner', reachable: true });
  });
});

describe('HTTP /v1/chat/completions body allow-list', () => {
  const gw = rigPerTest();

  it('unknown fields are refused with the supported list; nothing reaches the engine', async () => {
    const rig = await gw.start();
    const res = await fetch(`http://127.0.0.1:${rig.gateway.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], chat_template: '{{ evil }}', guided_grammar: 'x' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(/chat_template/);
    expect(rig.engine.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('allowed fields pass; the engine sees only them', async () => {
    const rig = await gw.start();
    const res = await fetch(`http://127.0.0.1:${rig.gateway.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], temperature: 0.3, max_tokens: 8, stream: false }),
    });
    expect(res.status).toBe(200);
    const sent = rig.engine.requests.find((r) => r.method === 'POST')!.body as Record<string, unknown>;
    expect(Object.keys(sent).sort()).toEqual(['max_tokens', 'messages', 'model', 'stream', 'temperature']);
  });
});
