// Per-key limits (token bucket + concurrent streams) and the shared scheduler's own refusals, as each
// dialect reports them: stream-v1 rate_limited/rejected with retry_after, seed 002 rate_limit, HTTP 429.
import { describe, expect, it } from 'vitest';
import { generatedText } from '../../support/traces';
import { JsonSocket, type Msg } from '../../support/gateway/json-socket';
import { MODEL, rigPerTest, type Rig } from '../../support/gateway/rig';
import { collect, startMsg } from '../../support/gateway/stream-client';

const gw = rigPerTest();

async function open(r: Rig, path: string, key = r.key): Promise<JsonSocket> {
  return gw.open(r.ws(`${path}${path.includes('stream') ? '?api_key=' : '?apiKey='}${key}`), path.includes('stream') ? 'stream-v1' : undefined);
}

const terminal = (id: unknown) => (m: Msg) => (m.type === 'error' || m.type === 'complete') && m.request_id === id;

describe('per-key limits', () => {
  it('the token bucket refuses a burst beyond its size with rate_limited and retry_after; other keys are unaffected', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } }, gateway: { limits: { burst: 2, ratePerMinute: 6 } } });
    const s = await open(rig, '/v1/stream');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = startMsg();
      ids.push(m.request_id as string);
      s.send(m);
    }
    const refused = await s.waitFor((m) => m.type === 'error' && m.request_id === ids[2]);
    expect(refused).toMatchObject({ code: 'rate_limited', kind: 'rejected', reason: 'per_minute' });
    expect(refused.retry_after as number).toBeGreaterThanOrEqual(1);
    expect(refused.retry_after as number).toBeLessThanOrEqual(10);
    // The message tells the person the limit and when to retry.
    expect(String(refused.message)).toMatch(/\(6\/min, burst 2\)\. Retry in \d+ s\./);
    expect(s.messages.filter((m) => m.type === 'quota').at(-1)).toMatchObject({ remaining: 0, limit: 2 });
    for (const id of ids.slice(0, 2)) expect(await s.waitFor(terminal(id))).toMatchObject({ type: 'complete' });
    expect(rig.engine.requests).toHaveLength(2);

    const other = await open(rig, '/v1/stream', rig.keys.create('other').key);
    const m = startMsg();
    other.send(m);
    expect((await collect(other, m.request_id as string)).text).toBe(generatedText(2));
  });

  it('caps concurrent streams per key; a slot frees when a stream ends', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 5 } }, gateway: { limits: { maxConcurrent: 2 } } });
    const s = await open(rig, '/v1/stream');
    const a = startMsg({ params: {} });
    const b = startMsg({ params: {} });
    const c = startMsg({ params: {} });
    s.send(a);
    s.send(b);
    s.send(c);
    const refused = await s.waitFor((m) => m.type === 'error' && m.request_id === c.request_id);
    expect(refused).toMatchObject({ code: 'rate_limited', kind: 'rejected', reason: 'concurrent', retry_after: 1 });
    expect(String(refused.message)).toContain('(the limit is 2)');
    const http = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(http.status).toBe(429);
    expect(await http.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'concurrent_limit_exceeded' } });
    s.send({ type: 'cancel', request_id: a.request_id });
    await s.waitFor(terminal(a.request_id));
    const d = startMsg({ params: { max_tokens: 3 } });
    s.send(d);
    expect((await collect(s, d.request_id as string)).text).toBe(generatedText(3));
    s.send({ type: 'cancel', request_id: b.request_id });
    await s.waitFor(terminal(b.request_id));
  });

  it('the shared scheduler refusing (queue full) reaches the client as rate_limited after started', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 100_000, delayMs: 5 } }, maxConcurrentPerEndpoint: 1, maxQueuePerModel: 0 });
    const s = await open(rig, '/v1/stream');
    const a = startMsg({ params: {} });
    s.send(a);
    await s.waitFor((m) => m.type === 'delta' && m.request_id === a.request_id);
    const b = startMsg({ params: {} });
    s.send(b);
    const e = await s.waitFor(terminal(b.request_id));
    expect(e).toMatchObject({ type: 'error', code: 'rate_limited', kind: 'rejected', seq: 1 });
    expect(e.retry_after as number).toBeGreaterThanOrEqual(1);
    expect(rig.book.get(`test/${b.request_id as string}`)?.status).toBe('rejected');
    s.send({ type: 'cancel', request_id: a.request_id });
    await s.waitFor(terminal(a.request_id));
  });

  it('/v1/ws answers rate_limit with retry_after; HTTP answers 429 with Retry-After', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } }, gateway: { limits: { burst: 1, ratePerMinute: 1 } } });
    const ws = await open(rig, '/v1/ws');
    ws.send({ type: 'chat.message', model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, request_id: 'one' });
    expect(await ws.waitFor((m) => m.request_id === 'one' && m.done === true)).toMatchObject({ type: 'chat.chunk' });
    ws.send({ type: 'chat.message', model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, request_id: 'two' });
    const e = await ws.type('error');
    expect(e).toMatchObject({ code: 'rate_limit', reason: 'per_minute', request_id: 'two' });
    expect(e.retry_after as number).toBeGreaterThan(30);

    const res = await fetch(`${rig.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rig.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(30);
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(await res.json()).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' } });
  });
});
