// HubLink hands the hub's messages on one per turn of the event loop (ws allowSynchronousEvents: false):
// a burst of requests arriving in one read does not hold the I/O of running streams until all are started.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { sessionTable } from '../../../src/core/hub/dispatch';
import { HubLink } from '../../../src/core/hub/link';
import { memoryLog } from '../../../src/core/log';
import { until } from '../../support/stack';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

const BURST = 5;

/** A hub that acks the register, then sends BURST notices in one socket write. */
async function burstHub(): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', r));
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (d) => {
      const m = JSON.parse(d.toString()) as { type: string; request_id: string };
      if (m.type !== 'register') return;
      ws.send(JSON.stringify({ type: 'ack', payload: { request_id: m.request_id, success: true } }));
      const sock = (ws as unknown as { _socket: import('node:net').Socket })._socket;
      sock.cork();
      for (let i = 0; i < BURST; i++) ws.send(JSON.stringify({ type: 'notice', payload: { n: i } }));
      sock.uncork();
    });
  });
  open.push(() => new Promise((r) => {
    for (const c of wss.clients) c.terminate();
    wss.close(() => r());
  }));
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`;
}

describe('HubLink inbound pacing', () => {
  it('runs the I/O and immediates queued by one message before it hands on the next of the same read', async () => {
    const url = await burstHub();
    const log = memoryLog().child('hub');
    const order: string[] = [];
    const l = new HubLink({
      url,
      nodeId: `04${'a'.repeat(128)}`,
      log,
      timings: { heartbeatIntervalMs: 10_000, pingIntervalMs: 10_000, readTimeoutMs: 10_000, reconnectMaxBackoffMs: 50, authFailedBackoffMs: 10_000 },
      register: () => ({ node_id: 'n', provider_id: 'n', worker_addr: 'n', owner_addr: '', token: 't', models: [], model_hashes: [], capabilities: [], cp_version: '0', node_name: 'x', protocol_version: '1' }),
      heartbeat: () => ({ node_id: 'n', timestamp: 0, models: [], model_health: {}, metrics: {} }),
      modelHealth: () => ({}),
      dispatch: (session) => ({
        ...sessionTable(session, log),
        notice: (m) => {
          const n = (m.payload as { n: number }).n;
          order.push(`notice ${n}`);
          // Work the next turn of the loop would do (an engine's chunk, say): it must come before the next message.
          setImmediate(() => order.push(`turn after ${n}`));
        },
      }),
    });
    open.push(() => l.stop());
    l.start();
    await until(() => order.length === BURST * 2, 'all notices handled');
    expect(order).toEqual(Array.from({ length: BURST }, (_, i) => [`notice ${i}`, `turn after ${i}`]).flat());
  });
});
