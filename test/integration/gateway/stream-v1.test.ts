// /v1/stream end to end: a real ws client, the real gateway, runner, scheduler and test engine.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generatedText, summarizeTrace } from '../../support/traces';
import { JsonSocket } from '../../support/gateway/json-socket';
import { MODEL, rigPerTest, type Rig } from '../../support/gateway/rig';
import { collect, startMsg } from '../../support/gateway/stream-client';

const gw = rigPerTest();

async function open(r: Rig, query = `?api_key=${r.key}`, protocols: string | string[] = 'stream-v1', headers?: Record<string, string>): Promise<JsonSocket> {
  return gw.open(r.ws(`/v1/stream${query}`), protocols, headers ? { headers } : undefined);
}

describe('stream-v1 basics', () => {
  it('streams a real engine trace: started, accepted, numbered deltas, complete with usage; the console sees it', async () => {
    const rig = await gw.start();
    const s = await open(rig);
    expect(s.ws.protocol).toBe('stream-v1');
    const start = startMsg();
    s.send(start);
    const started = await s.type('started');
    expect(started).toMatchObject({
      request_id: start.request_id,
      initial_metadata: { model: MODEL },
      compatibility: { protocol: 'stream-v1', window: { bytes: 65536, messages: 32 } },
    });
    expect(typeof started.resume_token).toBe('string');
    expect((started.compatibility as { features: string[] }).features).toContain('resume');
    const got = await collect(s, start.request_id as string);
    expect(got.text).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    expect(got.seqs).toEqual(got.seqs.map((_, i) => i + 1));
    // This trace carries no usage, so the counts are estimates and say so.
    expect(summarizeTrace('vllm-chat-basic.sse').usage).toBeUndefined();
    expect(got.terminal).toMatchObject({ type: 'complete', seq: got.seqs.length + 1, finish_reason: 'stop', usage: { estimated: true } });
    expect(s.messages.find((m) => m.type === 'accepted')).toEqual({ type: 'accepted', request_id: start.request_id, queue_position: 0 });
    expect(s.messages.some((m) => m.type === 'quota' && typeof m.remaining === 'number' && typeof m.reset === 'number')).toBe(true);
    // The engine got an OpenAI chat request with our params and local_model, streaming.
    const sent = rig.engine.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: 'Qwen/Qwen3-0.6B', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Tell me a joke' }] });
    const view = rig.book.get(`test/${start.request_id as string}`);
    expect(view).toMatchObject({ source: 'local', model: MODEL, status: 'ok' });
  });

  it('passes token ids beside the text when the engine gives them, and a prompt goes to /v1/completions', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 5 }, tokenIds: true } });
    const s = await open(rig);
    const start = startMsg({ messages: undefined, prompt: 'Once upon a time' });
    s.send(start);
    const got = await collect(s, start.request_id as string);
    expect(got.text).toBe(generatedText(5));
    expect(got.deltas.map((d) => d.token_ids)).toEqual([[1000], [1001], [1002], [1003], [1004]]);
    expect(rig.engine.requests.at(-1)?.path).toBe('/v1/completions');
  });

  it('authenticates by bearer header, by the access_token subprotocol pair, and by a first auth message', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 3 } } });
    const r = rig;
    const viaHeader = await open(r, '', 'stream-v1', { Authorization: `Bearer ${r.key}` });
    const viaProto = await open(r, '', ['stream-v1', 'access_token', r.key]);
    expect(viaProto.ws.protocol).toBe('stream-v1');
    const viaMessage = await open(r, '');
    viaMessage.send({ type: 'auth', token: r.key });
    await viaMessage.type('quota');
    for (const s of [viaHeader, viaProto, viaMessage]) {
      const start = startMsg();
      s.send(start);
      expect((await collect(s, start.request_id as string)).text).toBe(generatedText(3));
    }
  });

  it('refuses a wrong key, work before auth, and a connection that never authenticates', async () => {
    const rig = await gw.start({ gateway: { authTimeoutMs: 200 } });
    const bad = await open(rig, '?api_key=sk-swan-not-a-key');
    expect(await bad.type('error')).toMatchObject({ code: 'unauthorized', kind: 'rejected', reason: 'key_unknown' });
    expect((await bad.closed).code).toBe(1008);

    const early = await open(rig, '');
    early.send(startMsg());
    const e = await early.type('error');
    expect(e).toMatchObject({ code: 'unauthorized', kind: 'rejected', reason: 'key_missing' });
    // The message says what to send (the people-facing part of the refusal).
    expect(String(e.message)).toContain('"type":"auth"');
    expect((await early.closed).code).toBe(1008);

    const silent = await open(rig, '');
    expect(await silent.type('error')).toMatchObject({ code: 'unauthorized', reason: 'key_missing' });
    expect((await silent.closed).code).toBe(1008);
    expect(rig.engine.requests).toHaveLength(0);
  });

  it('a revoked key stops starting new work on an open connection', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } } });
    const s = await open(rig);
    rig.keys.revoke('test');
    s.send(startMsg());
    expect(await s.type('error')).toMatchObject({ code: 'unauthorized', kind: 'rejected', reason: 'key_revoked' });
    expect((await s.closed).code).toBe(1008);
  });

  it('negotiates versions: the newest known one is picked, unknown-only offers are refused with a reason', async () => {
    const rig = await gw.start();
    const mixed = await open(rig, `?api_key=${rig.key}`, ['stream-v2', 'stream-v1']);
    expect(mixed.ws.protocol).toBe('stream-v1');
    const refused = await JsonSocket.open(rig.ws(`/v1/stream?api_key=${rig.key}`), ['stream-v2']).then(
      () => undefined,
      (e: { status?: number; body?: string }) => e,
    );
    expect(refused?.status).toBe(400);
    expect(JSON.parse(refused!.body!)).toMatchObject({ error: { code: 400, reason: 'unsupported_version' } });
    const plain = await open(rig, `?api_key=${rig.key}`, []);
    expect(plain.ws.protocol).toBe('');
  });

  it('every malformed message gets a clear error and the connection keeps working', async () => {
    const rig = await gw.start({ engine: { mode: { generate: 2 } } });
    const s = await open(rig);
    await s.type('quota');
    const cases: Array<[unknown, string, RegExp]> = [
      ['{not json', 'invalid_message', /not valid JSON/],
      ['[1,2]', 'invalid_message', /one JSON object/],
      ['{"request_id":"x"}', 'invalid_message', /no "type" field/],
      [{ type: 'stop_everything' }, 'unknown_type', /Unknown message type "stop_everything".*start, ack, cancel/],
      [{ type: 'start', model: MODEL, prompt: 'x' }, 'invalid_request', /request_id: required/],
      [{ type: 'start', request_id: 'a b', model: MODEL, prompt: 'x' }, 'invalid_request', /request_id: use 1-128 printable/],
      [{ type: 'start', request_id: 'r1', model: MODEL }, 'invalid_request', /exactly one of prompt or messages/],
      [{ type: 'start', request_id: 'r2', model: MODEL, prompt: 'x', params: { temperature: 7 } }, 'invalid_request', /params\.temperature: Too big/],
      [{ type: 'start', request_id: 'r3', model: MODEL, prompt: 'x', params: { temprature: 1 } }, 'invalid_request', /temprature.*supported: max_tokens/],
      [{ type: 'start', request_id: 'r4', model: 'no-such-model', prompt: 'x' }, 'model_not_loaded', /not served by this provider.*gemini-2\.5-pro/],
      [{ type: 'ack', request_id: 'nope', seq: 1 }, 'unknown_request', /No request nope/],
      [{ type: 'ack', request_id: 'nope', seq: -1 }, 'invalid_request', /seq/],
      [{ type: 'cancel' }, 'invalid_request', /request_id/],
      [{ type: 'start', resume_token: 'garbage' }, 'invalid_resume_token', /not a stream-v1 resume token/],
    ];
    for (const [msg, code, text] of cases) {
      s.send(msg);
      const e = await s.type('error');
      expect(e.code, JSON.stringify(msg)).toBe(code);
      expect(String(e.message), JSON.stringify(msg)).toMatch(text);
      expect(['invalid', 'model_not_loaded']).toContain(e.kind);
    }
    s.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect(await s.type('error')).toMatchObject({ code: 'invalid_message', kind: 'invalid' });
    expect(rig.engine.requests).toHaveLength(0);
    const start = startMsg();
    s.send(start);
    expect((await collect(s, start.request_id as string)).text).toBe(generatedText(2));
  });

  it('refuses a message over 1 MB by closing with 1009', async () => {
    const rig = await gw.start();
    const s = await open(rig);
    s.send({ type: 'start', request_id: randomUUID(), model: MODEL, prompt: 'x'.repeat(1024 * 1024 + 10) });
    expect((await s.closed).code).toBe(1009);
  });

  it('describe_fleet answers with the seed 003 snapshot; heartbeats carry ts and quota follows', async () => {
    const rig = await gw.start({ gateway: { heartbeatMs: 100 } });
    const s = await open(rig);
    s.send({ type: 'describe_fleet', request_id: 'f1' });
    const f = await s.type('fleet');
    expect(f).toMatchObject({
      request_id: 'f1',
      active_requests: 0,
      executors: [{ name: `engine@127.0.0.1:${rig.engine.port}`, vendor: 'cpu', device_count: 0 }],
    });
    expect(f.loaded_models).toEqual([{ name: MODEL, revision: null, assigned_executor: `engine@127.0.0.1:${rig.engine.port}` }]);
    expect(typeof f.hostname).toBe('string');
    const hb = await s.type('heartbeat');
    expect(Math.abs((hb.ts as number) - Date.now())).toBeLessThan(5000);
    expect(await s.type('quota')).toMatchObject({ limit: 10, max_concurrent: 4 });
  });

  it('refuses browser pages from origins the owner did not allow; allowed ones connect', async () => {
    const rig = await gw.start({ gateway: { allowedOrigins: ['http://localhost:5173'] } });
    const evil = await JsonSocket.open(rig.ws(`/v1/stream?api_key=${rig.key}`), 'stream-v1', { headers: { Origin: 'http://evil.example' } }).then(
      () => undefined,
      (e: { status?: number; body?: string }) => e,
    );
    expect(evil?.status).toBe(403);
    expect(JSON.parse(evil!.body!)).toMatchObject({ error: { code: 403, reason: 'origin_not_allowed' } });
    const ok = await open(rig, `?api_key=${rig.key}`, 'stream-v1', { Origin: 'http://localhost:5173' });
    expect(ok.ws.protocol).toBe('stream-v1');
    const rebound = await JsonSocket.open(rig.ws(`/v1/stream?api_key=${rig.key}`), 'stream-v1', {
      headers: { Host: `attacker.example:${rig.gateway.port}` },
    }).then(
      () => undefined,
      (e: { status?: number; body?: string }) => e,
    );
    expect(rebound?.status).toBe(403);
    expect(JSON.parse(rebound!.body!)).toMatchObject({ error: { code: 403, reason: 'host_not_local' } });
  });
});
