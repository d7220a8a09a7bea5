// Alerts raised by the real agent: its link (dropped, key refused), engine health and pause reach the
// webhook (a real HTTP receiver on 127.0.0.1) and the bridge, with the cooldown per kind; Settings refuses a
// webhook URL with credentials. The list and the transport alone: test/core/alerts/alerts.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Alert } from '../../../src/shared/alerts';
import { registered, startStack, until, type Stack } from '../../support/stack';

interface Receiver {
  url: string;
  bodies: Record<string, unknown>[];
  hang: boolean;
  close(): Promise<void>;
}

async function receiver(): Promise<Receiver> {
  const r = { bodies: [] as Record<string, unknown>[], hang: false } as Receiver;
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => {
      r.bodies.push({ ...(JSON.parse(data) as Record<string, unknown>), _contentType: req.headers['content-type'] });
      if (r.hang) return;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?topic=rig`;
  r.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

let stack: Stack | undefined;
let rx: Receiver | undefined;
afterEach(async () => {
  await stack?.close();
  await rx?.close();
  stack = undefined;
  rx = undefined;
});

describe('the agent raises alerts', () => {
  it('link down, engine down, auto-pause and a test alert reach the webhook and the bridge', async () => {
    rx = await receiver();
    stack = await startStack({ engines: [{ models: ['m-a'] }] });
    await registered(stack);
    const bridged: Alert[] = [];
    stack.agent.subscribe((e) => {
      if (e.type === 'alert') bridged.push(e.alert);
    });
    const saved = await stack.agent.invoke('settings.save', { patch: { alertWebhookUrl: rx.url, alertCooldownMinutes: 5 } });
    expect(saved).toEqual({ ok: true });

    expect(await stack.agent.invoke('alerts.test', {})).toEqual({ webhook: 'sent', detail: 'HTTP 204' });
    expect(rx.bodies.map((b) => b.kind)).toEqual(['test']);

    stack.hub!.dropProviders();
    await until(() => rx!.bodies.some((b) => b.kind === 'link_down'), 'link_down at the webhook');
    await registered(stack);
    stack.hub!.dropProviders();
    await until(() => bridged.filter((a) => a.kind === 'link_down').length >= 2, 'a second link_down in the list');

    stack.engines[0]!.setMode('down');
    await until(() => rx!.bodies.some((b) => b.kind === 'engine_down'), 'engine_down at the webhook');
    expect(String(rx.bodies.find((b) => b.kind === 'engine_down')!.text)).toContain(stack.engines[0]!.url);

    await stack.agent.invoke('serving.pause', { reason: 'by hand' });
    await stack.agent.invoke('serving.resume', {});
    expect(await stack.agent.invoke('settings.save', { patch: { pauseSchedule: [{ days: [0, 1, 2, 3, 4, 5, 6], from: '00:00', to: '00:00' }] } })).toEqual({
      ok: true,
    });
    await until(() => bridged.some((a) => a.kind === 'auto_paused'), 'auto_paused');

    // The second link_down fell inside the cooldown: listed and pushed to the UI, not re-sent.
    expect(rx.bodies.filter((b) => b.kind === 'link_down')).toHaveLength(1);
    expect(bridged.map((a) => a.kind)).not.toContain('key_refused');
    const listed = (await stack.agent.invoke('alerts.list', {})) as Alert[];
    expect(listed[0]!.kind).toBe('auto_paused');
  });

  it('a refused key raises key_refused', async () => {
    stack = await startStack({ key: 'sk-prov-wrong-0000000000', start: false });
    const kinds: string[] = [];
    stack.agent.alerts.on('alert', (a) => kinds.push(a.kind));
    await stack.agent.start();
    await until(() => kinds.includes('key_refused'), 'key_refused');
    expect(kinds).not.toContain('link_down');
  });

  it('refuses a webhook URL with credentials, naming the field', async () => {
    stack = await startStack({ hub: false, start: false });
    const r = await stack.agent.invoke('settings.save', { patch: { alertWebhookUrl: 'https://me:secret@hooks.example.com/x' } });
    expect(r).toMatchObject({ ok: false, errors: { alertWebhookUrl: expect.any(String) } });
  });
});
