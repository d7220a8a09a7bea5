// A revoked gateway key stops working everywhere at the gateway's next revocation check (every
// REVOCATION_POLL_MS, a quarter of a second): open /v1/ws connections, running stream-v1 requests
// (attached or with their client away) and HTTP streams. The key is revoked the way the owner does it —
// from another GatewayKeys on the same home (the CLI or the console settings). The check's clock is a
// fake one moved by exactly one period, so the bound is checked without timing a loaded machine.
// Resume tokens are bound to the key itself (its hash), not its name.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GatewayKeys } from '../../../src/core/gateway/keys';
import { REVOCATION_POLL_MS } from '../../../src/core/gateway/server';
import type { JsonSocket } from '../../support/gateway/json-socket';
import { MODEL, rigPerTest, type Rig } from '../../support/gateway/rig';
import { collect, startMsg } from '../../support/gateway/stream-client';

const gw = rigPerTest();
const LONG = { engine: { mode: { generate: 100_000, delayMs: 5 } } };

/** The gateway's intervals on a fake clock (started after this): its revocation check runs when the test moves it. */
function fakeIntervals(): void {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
}
afterEach(() => {
  vi.useRealTimers();
});

/** Revokes the key from another GatewayKeys, then lets one revocation check period pass. */
async function revokeElsewhere(r: Rig, name: string): Promise<void> {
  new GatewayKeys(r.home).revoke(name);
  await vi.advanceTimersByTimeAsync(REVOCATION_POLL_MS);
}

async function openStream(r: Rig, key: string): Promise<JsonSocket> {
  return gw.open(r.ws(`/v1/stream?api_key=${key}`), 'stream-v1');
}

describe('gateway key revocation', () => {
  it('/v1/ws: an open connection is told and closed, and its running request stops at the engine, at the next check', async () => {
    fakeIntervals();
    const r = await gw.start(LONG);
    const s = await gw.open(r.ws(`/v1/ws?apiKey=${r.key}`));
    s.send({ type: 'chat.message', model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, request_id: 'w1' });
    await s.waitFor((m) => m.type === 'chat.chunk');
    await revokeElsewhere(r, 'test');
    const err = await s.waitFor((m) => m.type === 'error' && m.code === 'auth_error');
    expect(err.reason).toBe('key_revoked');
    await s.closed;
    await r.engine.waitForAbort(1);
  });

  it('stream-v1: the connection gets unauthorized, the running request is cancelled at the engine, at the next check', async () => {
    fakeIntervals();
    const r = await gw.start(LONG);
    const s = await openStream(r, r.key);
    const start = startMsg({ params: {} });
    s.send(start);
    await collect(s, start.request_id as string, { stopAfter: 2 });
    await revokeElsewhere(r, 'test');
    const err = await s.waitFor((m) => m.type === 'error' && m.code === 'unauthorized');
    expect(err.reason).toBe('key_revoked');
    await s.closed;
    await r.engine.waitForAbort(1);
  });

  it('stream-v1: a request whose client is away is cancelled too, and nothing can resume it', async () => {
    fakeIntervals();
    const r = await gw.start(LONG);
    const a = await openStream(r, r.key);
    const start = startMsg({ params: {} });
    a.send(start);
    const got = await collect(a, start.request_id as string, { stopAfter: 1 });
    a.ws.terminate();
    await revokeElsewhere(r, 'test');
    await r.engine.waitForAbort(1);
    // A new key that reuses the old key's name does not inherit the old key's streams.
    const reused = r.keys.create('test').key;
    const b = await openStream(r, reused);
    b.send({ type: 'start', resume_token: got.lastToken });
    expect(await b.type('error')).toMatchObject({ code: 'invalid_resume_token', reason: 'other_key' });
  });

  it("a new key with a revoked key's name cannot resume the old key's running stream", async () => {
    const r = await gw.start(LONG);
    const first = r.keys.create('shared-name').key;
    const a = await openStream(r, first);
    const start = startMsg({ params: {} });
    a.send(start);
    const got = await collect(a, start.request_id as string, { stopAfter: 1 });
    // Revoke and re-create under the same name in one step, faster than any poll can see the gap.
    const other = new GatewayKeys(r.home);
    other.revoke('shared-name');
    const second = other.create('shared-name').key;
    const b = await openStream(r, second);
    b.send({ type: 'start', resume_token: got.lastToken });
    const err = await b.type('error');
    expect(err).toMatchObject({ code: 'invalid_resume_token' });
    b.send({ type: 'start', request_id: start.request_id, model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    const again = await b.waitFor((m) => m.type === 'started' || m.type === 'error');
    expect(again.resumed).toBeUndefined();
  });

  it('HTTP: a running /v1/chat/completions stream of a revoked key is cut at the next check', async () => {
    fakeIntervals();
    const r = await gw.start(LONG);
    const res = await fetch(`http://127.0.0.1:${r.gateway.port}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    const reader = res.body!.getReader();
    await reader.read();
    await revokeElsewhere(r, 'test');
    let text = '';
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      text += Buffer.from(value!).toString();
    }
    await r.engine.waitForAbort(1);
    const events = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)) as { error?: { code?: string } });
    expect(events.at(-1)?.error).toMatchObject({ code: 'key_revoked', type: 'authentication_error' });
  });
});
