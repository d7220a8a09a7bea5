// The hub link contains a handler's failure to its one message: a throwing handler's inference is refused on
// its result path with 500 and its request id, a warmup whose handler rejects gets a coded error, and the
// connection stays registered and keeps serving.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { hubTable } from '../../../src/core/hub/dispatch';
import { HubLink } from '../../../src/core/hub/link';
import { memoryLog } from '../../../src/core/base/log';
import { until } from '../../support/stack';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

describe('HubLink handler boundary', () => {
  it('a throwing or rejecting handler fails its message only, answered with its id', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((r) => wss.once('listening', r));
    const got: Array<{ type: string; request_id?: string; payload?: Record<string, unknown> }> = [];
    let hub: WebSocket | undefined;
    wss.on('connection', (ws) => {
      hub = ws;
      ws.on('message', (d) => {
        const m = JSON.parse(String(d)) as { type: string; request_id?: string; payload?: Record<string, unknown> };
        got.push(m);
        if (m.type === 'register' || m.type === 'heartbeat') ws.send(JSON.stringify({ type: 'ack', payload: { request_id: '', success: true } }));
      });
    });
    open.push(
      () =>
        new Promise((r) => {
          for (const c of wss.clients) c.terminate();
          wss.close(() => r());
        }),
    );
    const log = memoryLog();
    const link = new HubLink({
      url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/ws`,
      nodeId: `04${'a'.repeat(128)}`,
      log: log.child('hub'),
      timings: { heartbeatIntervalMs: 200, pingIntervalMs: 10_000, readTimeoutMs: 10_000, reconnectMaxBackoffMs: 50, authFailedBackoffMs: 10_000 },
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
      dispatch: (session) =>
        hubTable(session, {
          relay: {
            inference: () => {
              throw new RangeError('Maximum call stack size exceeded');
            },
            cancel: () => undefined,
            resume: () => undefined,
          },
          notices: { receive: () => undefined },
          challenges: { warmup: () => Promise.reject(new Error('the engine vanished')), verify: () => undefined, benchmark: () => undefined },
          log: log.child('hub'),
        }),
    });
    open.push(() => link.stop());
    link.start();
    await until(() => link.connected && got.some((m) => m.type === 'register'), 'registered');
    hub!.send(JSON.stringify({ type: 'inference', request_id: 'r1', payload: { model_id: 'm', stream: true, request: { model: 'm', messages: [] } } }));
    hub!.send(JSON.stringify({ type: 'warmup', request_id: 'w1', payload: { model_id: 'm' } }));
    await until(
      () => got.some((m) => m.request_id === 'r1' && m.type === 'stream_end') && got.some((m) => m.request_id === 'w1' && m.type === 'error'),
      'both answered',
    );
    expect(got.find((m) => m.request_id === 'r1' && m.type === 'stream_end')?.payload?.status_code).toBe(500);
    expect(got.find((m) => m.request_id === 'w1' && m.type === 'error')?.payload).toMatchObject({ code: 500 });
    expect(log.entries(100).filter((e) => /handling the hub's (inference r1|warmup w1) failed/.test(e.msg))).toHaveLength(2);
    // Still registered: heartbeats go on over the same connection.
    const beats = got.filter((m) => m.type === 'heartbeat').length;
    await until(() => got.filter((m) => m.type === 'heartbeat').length > beats, 'another heartbeat');
    expect(link.connected).toBe(true);
  });
});
