// HubLink against a raw `ws` server acking as Go types AckPayload: any success:true ack completes
// registration ("request_id": "" or missing or matching); success:false and an error frame while
// registering are logged and the connection kept (Go logs them), the register deadline then saying the
// hub refused; an ack without success is not a registration; the register ack's extensions decide
// resume-v1, and each register ack is handed on (registerAck) with the hub's view of the node.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { HubLink } from '../../../src/core/hub/link';
import { memoryLog } from '../../../src/core/base/log';
import { until } from '../../support/stack';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

async function hubThatAcks(ack: (registerId: string) => unknown): Promise<{ url: string; registers: () => number; heartbeats: () => number }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', r));
  let registers = 0;
  let heartbeats = 0;
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string; request_id: string };
      if (m.type === 'heartbeat') {
        heartbeats++;
        ws.send(JSON.stringify({ type: 'ack', payload: { request_id: '', success: true } }));
      }
      if (m.type !== 'register') return;
      registers++;
      const a = ack(m.request_id);
      for (const one of Array.isArray(a) ? a : a ? [a] : []) ws.send(JSON.stringify(one));
    });
  });
  open.push(
    () =>
      new Promise((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`, registers: () => registers, heartbeats: () => heartbeats };
}

function link(url: string, heartbeatIntervalMs = 1000, log = memoryLog()): HubLink {
  const l = new HubLink({
    url,
    nodeId: `04${'a'.repeat(128)}`,
    log: log.child('hub'),
    timings: { heartbeatIntervalMs, pingIntervalMs: 10_000, readTimeoutMs: 10_000, reconnectMaxBackoffMs: 50, authFailedBackoffMs: 10_000 },
    register: () => ({
      node_id: 'n',
      provider_id: 'n',
      worker_addr: 'n',
      owner_addr: '',
      token: 't',
      models: [],
      model_hashes: [],
      capabilities: [],
      cp_version: '0',
      client: 'c',
      client_version: '0',
      node_name: 'x',
      protocol_version: '1',
      model_declarations: [],
    }),
    heartbeat: () => ({ node_id: 'n', provider_id: 'n', timestamp: 0, models: [], model_health: {}, metrics: {}, model_declarations: [], model_hashes: [] }),
    modelHealth: () => ({}),
  });
  open.push(() => l.stop());
  return l;
}

describe('HubLink registration acks', () => {
  it.each([
    [
      '"request_id": "" (Go AckPayload left unset)',
      (_id: string) => ({ type: 'ack', payload: { request_id: '', success: true, message: 'Registration successful' } }),
    ],
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

  it('success: false is logged and the link kept: a later success ack still registers', async () => {
    const hub = await hubThatAcks((id) => [
      { type: 'ack', payload: { request_id: '', success: false, message: 'node banned' } },
      { type: 'error', request_id: id, payload: { code: 500, message: 'try again' } },
      { type: 'ack', payload: { request_id: '', success: true } },
    ]);
    const log = memoryLog();
    const l = link(hub.url, 1000, log);
    const drops: string[] = [];
    l.on('disconnected', (r) => drops.push(r));
    l.start();
    await until(() => l.connected, 'registered after a failed ack and an error frame');
    expect(drops).toEqual([]);
    expect(hub.registers()).toBe(1);
    const warns = log.entries(100, 'warn').map((e) => e.msg);
    expect(warns).toContain('the hub refused registration: node banned');
    expect(warns).toContain('the hub sent an error while registering: try again (code 500)');
  });

  it("a refusal that no acceptance follows ends at the register deadline as REGISTER_REFUSED, with the hub's message", async () => {
    const hub = await hubThatAcks(() => ({ type: 'ack', payload: { request_id: '', success: false, message: 'node banned' } }));
    const l = link(hub.url, 100);
    const ended = new Promise<[string, string]>((r) => l.once('disconnected', (reason, code) => r([reason, code])));
    l.start();
    const [reason, code] = await ended;
    expect(code).toBe('REGISTER_REFUSED');
    expect(reason).toBe('the hub refused registration: node banned (no acceptance followed within 0.3 s)');
  });

  it('a refused re-register keeps the registration that stands', async () => {
    let n = 0;
    const hub = await hubThatAcks((id) =>
      ++n === 1
        ? { type: 'ack', payload: { request_id: '', success: true } }
        : { type: 'ack', request_id: id, payload: { request_id: id, success: false, message: 'model x refused' } },
    );
    const l = link(hub.url, 100);
    l.start();
    await until(() => l.connected, 'registered');
    const drops: string[] = [];
    l.on('disconnected', (r) => drops.push(r));
    l.reRegister();
    await until(() => hub.registers() === 2, 'the re-register reached the hub');
    // Three heartbeat ticks pass with the link up: the refusal neither closed it nor stopped the heartbeats.
    const hb = hub.heartbeats();
    await until(() => hub.heartbeats() >= hb + 3, 'heartbeats go on');
    expect(l.connected).toBe(true);
    expect(drops).toEqual([]);
  });

  it('hands every register ack on (registerAck), with registered_models and upgrade_available as sent', async () => {
    const hub = await hubThatAcks((id) => ({
      type: 'ack',
      request_id: id,
      payload: { request_id: id, success: true, registered_models: ['a/one'], upgrade_available: { running: '0.5.0', latest: '0.6.0', message: 'upgrade' } },
    }));
    const l = link(hub.url);
    const acks: unknown[] = [];
    l.on('registerAck', (a) => acks.push(a));
    l.start();
    await until(() => acks.length === 1, 'the first register ack');
    l.reRegister();
    await until(() => acks.length === 2, 'the re-register ack');
    expect(acks[1]).toMatchObject({ registered_models: ['a/one'], upgrade_available: { running: '0.5.0', latest: '0.6.0', message: 'upgrade' } });
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
