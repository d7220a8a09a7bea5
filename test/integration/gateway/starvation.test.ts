// The gateway cannot be starved without a key: connections are capped in total and per address (the rest
// of the process keeps its file descriptors), half-sent requests are cut at the headers deadline, and a
// client that has not authenticated gets one answer and is closed, however many frames it sends.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { rigPerTest, MODEL } from '../../support/gateway/rig';
import { until } from '../../support/stack';
import { get } from '../../support/console/http';

const gw = rigPerTest();

/** Opens `n` connections that send half a request and hold. */
async function halfSent(port: number, n: number): Promise<net.Socket[]> {
  const out: net.Socket[] = [];
  for (let i = 0; i < n; i++) {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    s.resume(); // read what comes (an answer, the end), as a client does
    s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Le`);
    out.push(s);
  }
  await Promise.all(out.map((s) => new Promise((r) => (s.connecting ? s.once('connect', r) : r(undefined)))));
  return out;
}

const closed = (s: net.Socket) => s.destroyed || s.readyState === 'closed' || !s.readable;

describe('gateway connection budget', () => {
  it('past the cap, new connections are closed at once; the ones inside it are served', async () => {
    const rig = await gw.start({ gateway: { maxConnections: 20 } });
    const port = rig.gateway.port;
    const flood = await halfSent(port, 40);
    await until(() => flood.filter(closed).length >= 20, 'the connections past the cap are closed');
    // Nothing lets a 21st in while 20 are held.
    const status = () =>
      get(port, '/v1/models', { authorization: `Bearer ${rig.key}` }).then(
        (r) => r.status,
        () => 0,
      );
    expect(await status()).toBe(0);
    for (const s of flood) s.destroy();
    await until(async () => (await status()) === 200, 'served again once the flood is gone');
  });

  it('half-sent requests are cut at the headers deadline', async () => {
    const rig = await gw.start({ gateway: { headersTimeoutMs: 300 } });
    const [s] = await halfSent(rig.gateway.port, 1);
    const t0 = Date.now();
    await until(() => closed(s!), 'the half-sent request is cut', 5000);
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it('one address gets at most its share when the gateway listens beyond loopback', async () => {
    const rig = await gw.start({ gateway: { maxConnections: 40, maxConnectionsPerAddress: 5 } });
    const flood = await halfSent(rig.gateway.port, 12);
    await until(() => flood.filter(closed).length >= 7, 'the connections past the per-address cap are closed');
    expect(flood.filter((s) => !closed(s))).toHaveLength(5);
    for (const s of flood) s.destroy();
  });
});

describe('stream-v1 before authentication', () => {
  it('answers once and closes, however many frames come', async () => {
    const rig = await gw.start();
    const ws = new WebSocket(rig.ws('/v1/stream'), ['stream-v1']);
    const got: string[] = [];
    ws.on('message', (d) => got.push(String(d)));
    await new Promise((r) => ws.once('open', r));
    for (let i = 0; i < 500; i++) ws.send(i % 2 ? '{"type":"start","request_id":"x","model":"m"}' : 'not json at all');
    const code = await new Promise<number>((r) => ws.once('close', (c) => r(c)));
    expect(code).toBe(1008);
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]!)).toMatchObject({ type: 'error', code: 'unauthorized', reason: 'key_missing' });
  });

  it('a bad key in the auth message: one answer, closed; a good one works as before', async () => {
    const rig = await gw.start();
    const bad = new WebSocket(rig.ws('/v1/stream'), ['stream-v1']);
    const got: string[] = [];
    bad.on('message', (d) => got.push(String(d)));
    await new Promise((r) => bad.once('open', r));
    bad.send(JSON.stringify({ type: 'auth', token: 'sk-swan-wrong' }));
    bad.send(JSON.stringify({ type: 'auth', token: 'sk-swan-wrong-again' }));
    await new Promise((r) => bad.once('close', r));
    expect(got.map((t) => (JSON.parse(t) as { reason?: string }).reason)).toEqual(['key_unknown']);
    const good = new WebSocket(rig.ws('/v1/stream'), ['stream-v1']);
    const first = new Promise<string>((r) => good.once('message', (d) => r(String(d))));
    await new Promise((r) => good.once('open', r));
    good.send(JSON.stringify({ type: 'auth', token: rig.key }));
    expect(JSON.parse(await first)).toMatchObject({ type: 'quota' });
    good.close();
    expect(MODEL).toBeTruthy();
  });
});
