// Alerts: the one list in core and the webhook transport posting JSON to a real HTTP receiver on 127.0.0.1 —
// with a cooldown per kind, a timeout, and a "send test alert" that reports the outcome. The real agent's link,
// engine health and pause raising them: test/integration/agent/alerts.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { AlertList } from '../../../src/core/alerts/alert-list';
import { noticeFromEvent } from '../../../src/core/alerts/notice-source';
import { webhookBody, webhookUrlProblem, WebhookTransport } from '../../../src/core/alerts/webhook';
import { until } from '../../support/stack';

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

let rx: Receiver | undefined;
afterEach(async () => {
  await rx?.close();
  rx = undefined;
});

describe('webhook URL and body', () => {
  it('accepts http(s) without credentials, and off', () => {
    expect(webhookUrlProblem('')).toBeUndefined();
    expect(webhookUrlProblem('https://ntfy.sh/my-rig')).toBeUndefined();
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook')).toBeUndefined();
    expect(webhookUrlProblem('ftp://example.com/x')).toMatch(/https:\/\//);
    expect(webhookUrlProblem('not a url')).toMatch(/not a valid address/);
    expect(webhookUrlProblem('https://user:pw@example.com/x')).toMatch(/no user name or password/);
  });

  it('carries the text in content (Discord) and text (Slack), with kind and node', () => {
    const b = webhookBody({ id: 'a1', kind: 'engine_down', ts: 0, title: 'An engine stopped answering', text: 'x is unhealthy' }, 'rig-1');
    expect(b.content).toBe('[rig-1] An engine stopped answering: x is unhealthy');
    expect(b.text).toBe(b.content);
    expect(b).toMatchObject({ kind: 'engine_down', node: 'rig-1', ts: '1970-01-01T00:00:00.000Z' });
  });

  it('reads hub notices by their common field names and ignores other events', () => {
    expect(noticeFromEvent({ type: 'notice', notice: { title: 'Maintenance', message: 'Hub restarts at 02:00' } })).toEqual({
      title: 'Maintenance',
      message: 'Hub restarts at 02:00',
    });
    expect(noticeFromEvent({ type: 'notice', text: 'hello' })).toEqual({ message: 'hello' });
    expect(noticeFromEvent({ type: 'notice', notice: { message: 42 } })).toBeUndefined();
    expect(noticeFromEvent({ type: 'log', entry: {} })).toBeUndefined();
  });
});

describe('webhook transport', () => {
  it('sends one alert per kind per cooldown; a test alert goes only through send()', async () => {
    rx = await receiver();
    let now = 1_000_000;
    const t = new WebhookTransport({ url: () => rx!.url, cooldownMs: () => 60_000, node: () => 'rig', log: memoryLog().child('alerts'), now: () => now });
    const list = new AlertList();
    list.on('alert', (a) => t.handle(a));
    list.raise('engine_down', 'down', 'one', now);
    list.raise('engine_down', 'down', 'two (cooling down)', now);
    list.raise('link_down', 'link', 'other kind goes', now);
    list.raise('test', 'Test alert', 'not by handle', now);
    await t.send(list.raise('test', 'Test alert', 't1', now));
    await t.send(list.raise('test', 'Test alert', 't2', now));
    await until(() => rx!.bodies.length >= 4, 'four webhook calls');
    now += 61_000;
    list.raise('engine_down', 'down', 'three (after the cooldown)', now);
    await until(() => rx!.bodies.length >= 5, 'the fifth call');
    const texts = rx.bodies.map((b) => `${String(b.kind)}:${String(b.content).split(': ')[1]}`).sort();
    expect(texts).toEqual(['engine_down:one', 'engine_down:three (after the cooldown)', 'link_down:other kind goes', 'test:t1', 'test:t2']);
    expect(rx.bodies[0]!._contentType).toBe('application/json');
  });

  it('gives up after its timeout and reports why, without throwing', async () => {
    rx = await receiver();
    rx.hang = true;
    const t = new WebhookTransport({ url: () => rx!.url, cooldownMs: () => 0, node: () => 'rig', log: memoryLog().child('alerts'), timeoutMs: 200 });
    const started = Date.now();
    const r = await t.send({ id: 'x', kind: 'test', ts: Date.now(), title: 't', text: 't' });
    expect(r.webhook).toBe('failed');
    expect(r.detail).toMatch(/no answer within 0.2 s/);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('reports an unreachable receiver and "off" when no URL is set', async () => {
    const t = new WebhookTransport({ url: () => 'http://127.0.0.1:9/hook', cooldownMs: () => 0, node: () => 'rig', log: memoryLog().child('alerts') });
    expect((await t.send({ id: 'x', kind: 'test', ts: 0, title: 't', text: 't' })).webhook).toBe('failed');
    const off = new WebhookTransport({ url: () => undefined, cooldownMs: () => 0, node: () => 'rig', log: memoryLog().child('alerts') });
    expect(await off.send({ id: 'x', kind: 'test', ts: 0, title: 't', text: 't' })).toEqual({ webhook: 'off' });
  });
});
