// The write lanes of one hub socket, over a real `ws` pair whose server stops reading its TCP socket:
// data is handed on at once below the high-water mark and waits above it; a control message is handed on
// while data waits, and reaches the hub ahead of it; the stall is measured for the write deadline; a
// closed socket tells every waiting writer its message was not sent.
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { WriteLanes } from '../../../src/core/hub/write-lanes';
import { memoryLog } from '../../../src/core/base/log';
import { encodeStreamChunk, out } from '../../../src/core/protocol/messages';
import { until } from '../../support/stack';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of open.splice(0).reverse()) await c();
});

async function pair(): Promise<{ client: WebSocket; serverSocket: () => Socket; received: string[] }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, perMessageDeflate: false });
  await new Promise<void>((r) => wss.once('listening', r));
  const received: string[] = [];
  let socket: Socket | undefined;
  wss.on('connection', (ws, req) => {
    socket = req.socket;
    ws.on('message', (d) => received.push(String(d)));
  });
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`, { perMessageDeflate: false });
  await new Promise<void>((r) => client.once('open', () => r()));
  await until(() => socket !== undefined, 'the server side of the connection');
  open.push(
    () =>
      new Promise((r) => {
        client.terminate();
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  );
  return { client, serverSocket: () => socket!, received };
}

const CHUNK = JSON.stringify({ text: 'x'.repeat(16 * 1024) });

describe('WriteLanes', () => {
  it('waits above the high-water mark, lets control through first, and flows on when the hub reads again', async () => {
    const { client, serverSocket, received } = await pair();
    const counters = { sent: 0, refusedOversize: 0 };
    const lanes = new WriteLanes(client, { highWaterBytes: 64 * 1024, counters, log: memoryLog().child('hub') });
    expect(lanes.data(encodeStreamChunk('r', 1, CHUNK))).toBe(true);
    await until(() => received.length === 1, 'the first chunk arrives');

    serverSocket().pause();
    // Write until a writer waits and keeps waiting: the kernel's buffers fill first, then the lane's
    // mark (a writer that waits only until the socket's callbacks catch up is not a stall yet).
    let waiting: Promise<boolean> | undefined;
    let seq = 2;
    for (; seq < 100_000; seq++) {
      const took = lanes.data(encodeStreamChunk('r', seq, CHUNK));
      if (took === true) {
        // Let the socket's write callbacks run so the in-flight count reflects what the kernel took.
        if (seq % 32 === 0) await new Promise((r) => setImmediate(r));
        continue;
      }
      expect(took).toBeInstanceOf(Promise);
      let settled = false;
      waiting = (took as Promise<boolean>).then((ok) => ((settled = true), ok));
      await new Promise((r) => setTimeout(r, 50));
      if (!settled) break;
    }
    const lastData = seq;
    expect(waiting).toBeDefined();
    expect(lanes.queued).toBe(1);
    await until(() => lanes.stalledMs() > 0, 'a write without progress is measured');

    expect(lanes.control(out.error('ctl', 503, 'control goes first'))).toBe(true);
    serverSocket().resume();
    expect(await waiting).toBe(true);
    await until(() => received.some((t) => t.includes(`"seq":${lastData}}`)), 'the waiting chunk arrives');
    const controlAt = received.findIndex((t) => t.includes('"request_id":"ctl"'));
    const waitingAt = received.findIndex((t) => t.includes(`"seq":${lastData}}`));
    expect(controlAt).toBeGreaterThan(0);
    expect(controlAt).toBeLessThan(waitingAt);
    await until(() => lanes.stalledMs() === 0, 'every write confirmed');
    expect(counters.sent).toBe(lastData + 1);
  });

  it('a socket that closes tells every waiting writer its message was not sent; a closed socket takes nothing', async () => {
    const { client, serverSocket } = await pair();
    const lanes = new WriteLanes(client, { highWaterBytes: 1, counters: { sent: 0, refusedOversize: 0 }, log: memoryLog().child('hub') });
    serverSocket().pause();
    expect(lanes.data(encodeStreamChunk('r', 1, CHUNK))).toBe(true);
    const waiting = lanes.data(encodeStreamChunk('r', 2, CHUNK));
    expect(waiting).toBeInstanceOf(Promise);
    client.terminate();
    lanes.close();
    expect(await waiting).toBe(false);
    await until(() => client.readyState === WebSocket.CLOSED, 'closed');
    expect(lanes.data(encodeStreamChunk('r', 3, CHUNK))).toBe(false);
    expect(lanes.control(out.error('x', 500, 'late'))).toBe(false);
  });

  it('refuses a control message over the 1 MB limit without sending it', async () => {
    const { client, received } = await pair();
    const counters = { sent: 0, refusedOversize: 0 };
    const lanes = new WriteLanes(client, { highWaterBytes: 64 * 1024, counters, log: memoryLog().child('hub') });
    expect(lanes.control(out.error('big', 500, 'x'.repeat(1024 * 1024 + 1)))).toBe(false);
    expect(counters).toEqual({ sent: 0, refusedOversize: 1 });
    expect(lanes.control(out.error('small', 500, 'fits'))).toBe(true);
    await until(() => received.length === 1, 'the small one arrives');
    expect(received[0]).toContain('"small"');
  });
});
