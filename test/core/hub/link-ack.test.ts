// HubLink against a raw `ws` server acking as Go types AckPayload: any success:true ack completes
// registration ("request_id": "" or missing or matching), success:false is a refusal, an ack without
// success is not a registration, and the register ack's extensions decide resume-v1.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { HubLink } from '../../../src/core/hub/link';
import { memoryLog } from '../../../src/core/log';
import { until } from '../../support/stack';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

async function hubThatAcks(ack: (registerId: string) => unknown): Promise<{ url: string; registers: () => number }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', r));
  let registers = 0;
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string; request_id: string };
      if (m.type !== 'register') return;
      registers++;
      const a = ack(m.request_id);
      if (a) ws.send(JSON.stringify(a));
    });
  });
  open.push(() => new Promise((r) => {
    for (const c of wss.clients) c.terminate();
    wss.close(() => r());
  }));
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`, registers: () => registers };
}

function link(url: string, heartbeatIntervalMs = 1000): HubLink {
  const l = new HubLink({
    url,
    nodeId: `04${'a'.repeat(128)}`,
    log: memoryLog().child('hub'),
    timings: { heartbeatIntervalMs, pingIntervalMs: 10_000, readTimeoutMs: 10_000, reconnectMaxBackoffMs: 50, authFailedBackoffMs: 10_000 },
    register: () => ({ node_id: 'n', provider_id: 'n', worker_addr: 'n', owner_addr: '', token: 't', models: [], model_hashes: [], capabilities: [], cp_version: '0', node_name: 'x', protocol_version: '1' }),
    heartbeat: () => ({ node_id: 'n', timestamp: 0, models: [], model_health: {}, metrics: {} }),
    modelHealth: () => ({}),
  });
  open.push(() => l.stop());
  return l;
}

describe('HubLink registration acks', () => {
  it.each([
    ['"request_id": "" (Go AckPayload left unset)', (_id: string) => ({ type: 'ack', payload: { request_id: '', success: true, message: 'Registration successful' } })],
    ['no request_id at all', (_id: string) => ({ type: 'ack', payload: { success: true } })],
    ['the matching request_id', (id: string) => ({ type: 'ack', request_id: id, payload: { request_id: id, success: true } })],
  ])('completes on a success ack with %s; no extensions: the hub does not resume', async (_name, ack) => {
    const hub = await hubThatAcks(ack);
    const l = link(hub.url);
    l.start();
    await until(() => l.connected, 'registered');
    expect(l.hubResumes).toBe(false);
  });

  it('a register ack with extensions ["resume-v1"] turns resume on', async () => {
    const hub = await hubThatAcks(() => ({ type: 'ack', payload: { request_id: '', success: true, extensions: ['resume-v1'] } }));
    const l = link(hub.url);
    l.start();
    await until(() => l.connected, 'registered');
    expect(l.hubResumes).toBe(true);
  });

  it('success: false is a refusal, with the hub\'s message', async () => {
    const hub = await hubThatAcks(() => ({ type: 'ack', payload: { request_id: '', success: false, message: 'node banned' } }));
    const l = link(hub.url);
    const reason = new Promise<string>((r) => l.once('disconnected', r));
    l.start();
    expect(await reason).toBe('the hub refused registration: node banned');
    expect(l.connected).toBe(false);
  });

  it('an ack without success, or none at all, does not register: after 3 heartbeat ticks the link redials', async () => {
    const hub = await hubThatAcks(() => ({ type: 'ack', payload: { request_id: '' } }));
    const l = link(hub.url, 100);
    const reason = new Promise<string>((r) => l.once('disconnected', r));
    l.start();
    expect(await reason).toBe('the hub did not acknowledge registration within 0.3 s');
    expect(l.connected).toBe(false);
    await until(() => hub.registers() >= 2, 'dialled again');
  });
});
