// stream-v1 flow control and cancellation, measured at the engine: a full window stops the gateway
// reading the engine (the test engine's writes hit backpressure), an ack lets it continue, a client that
// never acks is dropped and its request cancelled, and cancel reaches the engine.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { generatedText } from '../../support/traces';
import { engineStalled } from '../../support/gateway/engine-stall';
import { JsonSocket, type Msg } from '../../support/gateway/json-socket';
import { rigPerTest, type Rig } from '../../support/gateway/rig';
import { collect, startMsg } from '../../support/gateway/stream-client';

const gw = rigPerTest();

async function open(r: Rig): Promise<JsonSocket> {
  return gw.open(r.ws(`/v1/stream?api_key=${r.key}`), 'stream-v1');
}

const deltas = (s: JsonSocket, id: string): Msg[] => s.messages.filter((m) => m.type === 'delta' && m.request_id === id);
const isDelta = (id: string, seq: number) => (m: Msg) => m.type === 'delta' && m.request_id === id && m.seq === seq;

describe('stream-v1 flow control', () => {
  it('stops at 32 unacked messages, pauses reading the engine, and resumes on ack', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000 } } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    s.send(start);
    await s.waitFor(isDelta(id, 32));
    const written = await engineStalled(rig.engine);
    const accepted = rig.engine.eventsAccepted;
    expect(accepted).toBeLessThan(written);
    expect(written).toBeLessThan(100_000);
    expect(deltas(s, id)).toHaveLength(32);

    s.send({ type: 'ack', request_id: id, seq: 32 });
    await s.waitFor(isDelta(id, 64));
    await sleep(100); // "no 65th delta" has no event: a bounded quiet period
    expect(deltas(s, id)).toHaveLength(64); // the next window, and not one more
    expect(
      deltas(s, id)
        .map((d) => d.text_chunk)
        .join(''),
    ).toBe(generatedText(64));

    s.send({ type: 'cancel', request_id: id });
    // The cancellation skips the full window and reaches the engine.
    expect(await s.waitFor((m) => m.type === 'error' && m.request_id === id)).toMatchObject({ code: 'cancelled', kind: 'cancelled', seq: 65 });
    await rig.engine.waitForAbort(1);
    console.info(`flow control: engine paused after ${written} events written (${accepted} accepted by the socket) of 100000`);
  });

  it('also stops at the byte window', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000 } }, gateway: { window: { bytes: 4096, messages: 1000 } } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    s.send(start);
    const size = (d: Msg) => Buffer.byteLength(JSON.stringify(d));
    let total = 0;
    // Every delta is under 400 bytes: once 3.7 KB arrived the window is as full as it gets.
    await s.waitFor((m) => m.type === 'delta' && (total += size(m)) > 4096 - 400);
    await engineStalled(rig.engine);
    const got = deltas(s, id);
    expect(got.every((d) => size(d) < 400)).toBe(true);
    expect(got.map(size).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4096);
    s.send({ type: 'ack', request_id: id, seq: got.length });
    await s.waitFor(isDelta(id, got.length + 1));
  });

  it('a client that never acks is disconnected after the ack timeout and its request is cancelled at the engine', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000 } }, gateway: { ackTimeoutMs: 300 } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    s.send(start);
    const e = await s.waitFor((m) => m.type === 'error' && m.request_id === id);
    expect(e).toMatchObject({ code: 'ack_timeout', kind: 'cancelled' });
    expect(String(e.message)).toContain('"type":"ack"');
    expect((await s.closed).code).toBe(1008);
    await rig.engine.waitForAbort(1);
    expect(rig.book.get(`test/${id}`)?.status).toBe('cancelled');
  });

  it('a client that acks as it reads gets a long stream whole, never more than the window ahead', async () => {
    const n = 3000;
    const rig = await gw.start({ engine: { mode: { generate: n } } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    s.send(start);
    const got = await collect(s, start.request_id as string);
    expect(got.text).toBe(generatedText(n));
    expect(got.terminal).toMatchObject({ type: 'complete', usage: { prompt_tokens: 8, completion_tokens: n, estimated: false } });
  });
});

describe('stream-v1 cancel', () => {
  it('cancel mid-stream reaches the engine and ends the request as cancelled', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 2 } } });
    const s = await open(rig);
    const start = startMsg({ params: {} });
    const id = start.request_id as string;
    s.send(start);
    await collect(s, id, { stopAfter: 5 });
    s.send({ type: 'cancel', request_id: id });
    const end = await s.waitFor((m) => m.type === 'error' && m.request_id === id);
    expect(end).toMatchObject({ code: 'cancelled', kind: 'cancelled' });
    await rig.engine.waitForAbort(1);
    expect(rig.engine.abortedCount).toBe(1);
    expect(rig.book.get(`test/${id}`)?.status).toBe('cancelled');
    // The connection is fine afterwards.
    const next = startMsg({ params: { max_tokens: 3 } });
    s.send(next);
    expect((await collect(s, next.request_id as string)).text).toBe(generatedText(3));
  });

  it('cancel of a queued request takes it out of the scheduler queue before it reaches the engine', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 2 } }, maxConcurrentPerEndpoint: 1 });
    const s = await open(rig);
    const running = startMsg({ params: {} });
    const queued = startMsg({ params: {} });
    s.send(running);
    await s.waitFor(isDelta(running.request_id as string, 1));
    s.send(queued);
    expect(await s.waitFor((m) => m.type === 'accepted' && m.request_id === queued.request_id)).toMatchObject({ queue_position: 1 });
    s.send({ type: 'cancel', request_id: queued.request_id });
    expect(await s.waitFor((m) => m.type === 'error' && m.request_id === queued.request_id)).toMatchObject({ code: 'cancelled', kind: 'cancelled' });
    expect(rig.engine.requests).toHaveLength(1);
    s.send({ type: 'cancel', request_id: 'never-started' });
    expect(await s.waitFor((m) => m.type === 'error' && m.request_id === 'never-started')).toMatchObject({ code: 'unknown_request', kind: 'invalid' });
  });
});
