// The dev hub as the local stand-in of the real hub's dialect (HUB-PROTOCOL.md): Go-typed acks,
// replies routed by the envelope's request_id, a failure only in stream_end read as a provider failure
// (error-first chunks classified), notices on demand, and the platform HTTP API from its fixtures.
// A raw `ws` client plays the provider so every frame is exactly what the test says.
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import { parseInbound } from '../../../src/core/protocol/messages';
import { registered, startStack, TEST_KEY, until, type Stack } from '../../support/stack';

let hub: DevHub | undefined;
let stack: Stack | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets) s.terminate();
  sockets.length = 0;
  await stack?.close();
  stack = undefined;
  await hub?.close();
  hub = undefined;
});

type Frame = { type: string; request_id?: string; payload: Record<string, unknown> };

async function provider(h: DevHub, models = ['m1']): Promise<{ ws: WebSocket; frames: Frame[]; send: (f: unknown) => void }> {
  const ws = new WebSocket(`${h.wsUrl}/ws`);
  sockets.push(ws);
  const frames: Frame[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString()) as Frame));
  await new Promise((r) => ws.once('open', r));
  const send = (f: unknown): void => ws.send(JSON.stringify(f));
  // No request_id at all: the ack must still carry "request_id": "".
  send({ type: 'register', payload: { node_id: 'node-raw', token: TEST_KEY, models, capabilities: ['inference', 'verification'] } });
  await until(() => frames.some((f) => f.type === 'ack'), 'register ack');
  return { ws, frames, send };
}

const stats = async (h: DevHub) => ((await (await fetch(`${h.url}/dev/stats`)).json()) as { total: Record<string, number> }).total;

describe('dev hub dialect', () => {
  it('acks as Go types AckPayload: request_id always present ("" when unset), success, message', async () => {
    hub = await startDevHub({ token: TEST_KEY });
    const p = await provider(hub);
    const ack = p.frames.find((f) => f.type === 'ack')!;
    expect(ack.payload).toEqual({ request_id: '', success: true, message: expect.any(String), extensions: ['resume-v1', 'simulated-network'] });
    p.send({ type: 'heartbeat', request_id: 'hb-1', payload: { node_id: 'node-raw', metrics: { gpu_utilization: 37.4, memory_utilization: 52 } } });
    await until(() => p.frames.filter((f) => f.type === 'ack').length === 2, 'heartbeat ack');
    expect(p.frames.filter((f) => f.type === 'ack')[1]).toEqual({
      type: 'ack',
      request_id: 'hb-1',
      payload: { request_id: 'hb-1', success: true, message: '' },
    });
    // Percent metrics are shown as percent.
    const [view] = (await (await fetch(`${hub.url}/dev/providers`)).json()) as Array<{ metricsSummary: string }>;
    expect(view!.metricsSummary).toBe('GPU 37 %, memory 52 %');
  });

  it('after a re-register, a pending call with nothing received yet is resumed from last_seq 0, which the agent accepts', async () => {
    hub = await startDevHub({ token: TEST_KEY });
    const register = { type: 'register', payload: { node_id: 'node-raw', token: TEST_KEY, models: ['m1'], capabilities: ['inference', 'resume-v1'] } };
    const first = await provider(hub);
    first.send(register);
    await until(() => first.frames.filter((f) => f.type === 'ack').length >= 2, 'registered with resume-v1');
    const reply = fetch(`${hub.url}/dev/warmup`, { method: 'POST', body: JSON.stringify({ model_id: 'm1', timeout_ms: 200 }) });
    await until(() => first.frames.some((f) => f.type === 'warmup'), 'warmup sent');
    const id = first.frames.find((f) => f.type === 'warmup')!.request_id!;
    hub.dropProviders();
    const again = await provider(hub);
    again.send(register);
    await until(() => again.frames.some((f) => f.type === 'resume'), 'resume sent');
    const resume = again.frames.find((f) => f.type === 'resume')!;
    expect(resume.payload).toEqual({ request_id: id, last_seq: 0 });
    expect(parseInbound(JSON.stringify(resume))).toEqual({ type: 'resume', requestId: id, lastSeq: 0 });
    again.send({ type: 'ack', request_id: id, payload: { request_id: id, success: true, message: '' } });
    expect((await reply).status).toBe(200);
  });

  it('the real agent registers against acks that leave request_id unset', async () => {
    stack = await startStack();
    await registered(stack);
    stack.hub!.behaviour.ackWithoutIds = true;
    stack.hub!.dropProviders(); // the agent redials
    await until(() => stack!.agent.hubStatus().counters.dials >= 2, 'redialled');
    await registered(stack);
    const beats = stack.hub!.providers()[0]!.heartbeats;
    await until(() => stack!.hub!.providers()[0]!.heartbeats >= beats + 4, 'heartbeats go on (acked with "")');
    expect(stack.agent.hubStatus().connected).toBe(true);
  });

  it('routes replies by the envelope request_id, and by the payload id when the envelope has none', async () => {
    hub = await startDevHub({ token: TEST_KEY });
    const p = await provider(hub);
    const answer = fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await until(() => p.frames.some((f) => f.type === 'inference'), 'inference sent');
    const id = p.frames.find((f) => f.type === 'inference')!.request_id!;
    // Envelope id only; the payload's id is wrong on purpose: the envelope wins.
    p.send({ type: 'ack', request_id: id, payload: { request_id: 'someone-else', response: { id: 'x', choices: [] }, status_code: 200, latency_ms: 3 } });
    const res = await answer;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 'x', choices: [] });

    const second = fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm1', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await until(() => p.frames.filter((f) => f.type === 'inference').length === 2, 'second inference');
    const id2 = p.frames.filter((f) => f.type === 'inference')[1]!.request_id!;
    p.send({ type: 'ack', payload: { request_id: id2, response: { id: 'y' }, status_code: 200, latency_ms: 3 } });
    expect(await (await second).json()).toEqual({ id: 'y' });
  });

  it('an error only in stream_end is a provider failure; an error-first chunk is a classified failure', async () => {
    const lines: string[] = [];
    hub = await startDevHub({ token: TEST_KEY, earningsEnabled: true, log: (l) => lines.push(l) });
    const priced = 'simulated-llama-3.1-8b-instruct'; // in the model-demand fixture: 0.1 in / 0.2 out per 1M
    const p = await provider(hub, ['m1', priced]);
    const streamOnce = async (frames: (id: string) => unknown[], model = 'm1'): Promise<Response> => {
      const before = p.frames.filter((f) => f.type === 'inference').length;
      const r = fetch(`${hub!.url}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
      });
      await until(() => p.frames.filter((f) => f.type === 'inference').length > before, 'inference sent');
      const id = p.frames.filter((f) => f.type === 'inference')[before]!.request_id!;
      for (const f of frames(id)) p.send(f);
      return r;
    };
    const onlyEnd = await streamOnce((id) => [
      { type: 'stream_end', request_id: id, payload: { request_id: id, latency_ms: 5, status_code: 503, error: 'engine overloaded' } },
    ]);
    expect(onlyEnd.status).toBe(503);
    const errorFirst = await streamOnce((id) => [
      { type: 'stream_chunk', request_id: id, payload: { request_id: id, chunk: null, done: true, error: 'model not loaded' } },
      { type: 'stream_end', request_id: id, payload: { request_id: id, latency_ms: 5, status_code: 404, error: 'model not loaded' } },
    ]);
    expect(errorFirst.status).toBe(404);
    expect(await errorFirst.json()).toEqual({ error: { message: 'model not loaded', code: 404 } });
    const good = await streamOnce(
      (id) => [
        { type: 'stream_chunk', request_id: id, payload: { request_id: id, chunk: { choices: [{ delta: { content: 'hi' } }] }, done: false } },
        { type: 'stream_chunk', request_id: id, payload: { request_id: id, chunk: null, done: true } },
        { type: 'stream_end', request_id: id, payload: { request_id: id, latency_ms: 5, tokens_input: 3000, tokens_output: 1000 } },
      ],
      priced,
    );
    expect(good.status).toBe(200);
    await good.text();
    expect(await stats(hub)).toMatchObject({
      requests: 3,
      ok: 1,
      failed: 2,
      providerFailures: 1,
      errorFirstFailures: 1,
      midStreamFailures: 0,
      tokensIn: 3000,
      tokensOut: 1000,
    });
    expect(lines.filter((l) => /provider failure/.test(l))).toHaveLength(1);

    // The platform's own record of this key follows what was served.
    const me = (await (await fetch(`${hub.url}/api/v1/provider/me/stats`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()) as {
      data: Record<string, unknown>;
    };
    expect(me.data).toMatchObject({
      total_inferences: 3,
      successful_inferences: 1,
      failed_inferences: 2,
      total_input_tokens: 3000,
      total_output_tokens: 1000,
      total_tokens: 4000,
      total_earnings_usdc: 0.0005,
    });
  });

  it('a provider whose earnings are not enabled is paid nothing in the platform record', async () => {
    hub = await startDevHub({ token: TEST_KEY, earningsEnabled: false });
    const priced = 'simulated-llama-3.1-8b-instruct';
    const p = await provider(hub, [priced]);
    const r = fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: priced, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await until(() => p.frames.some((f) => f.type === 'inference'), 'inference sent');
    const id = p.frames.find((f) => f.type === 'inference')!.request_id!;
    p.send({ type: 'stream_chunk', request_id: id, payload: { request_id: id, chunk: null, done: true } });
    p.send({ type: 'stream_end', request_id: id, payload: { request_id: id, latency_ms: 5, tokens_input: 3000, tokens_output: 1000 } });
    await (await r).text();
    const me = (await (await fetch(`${hub.url}/api/v1/provider/me/stats`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()) as {
      data: Record<string, unknown>;
    };
    expect(me.data).toMatchObject({ total_inferences: 1, total_tokens: 4000, total_earnings_usdc: 0 });
  });

  it('POST /dev/notice sends a notice frame to the connected providers', async () => {
    hub = await startDevHub({ token: TEST_KEY });
    const p = await provider(hub);
    const res = await fetch(`${hub.url}/dev/notice`, { method: 'POST', body: JSON.stringify({ event: 'payout_pending', severity: 'info', message: 'soon' }) });
    expect(await res.json()).toEqual({ sent: 1 });
    await until(() => p.frames.some((f) => f.type === 'notice'), 'notice frame');
    expect(p.frames.find((f) => f.type === 'notice')!.payload).toEqual({ event: 'payout_pending', severity: 'info', message: 'soon' });
    expect((await fetch(`${hub.url}/dev/notice`, { method: 'POST', body: '{nope' })).status).toBe(400);
  });

  it('a /dev body that is not a JSON object is a 400 on every route that reads one (never a 500)', async () => {
    hub = await startDevHub({ token: TEST_KEY });
    await provider(hub);
    for (const route of ['notice', 'upgrade', 'status', 'warmup', 'verify', 'benchmark']) {
      for (const body of ['{nope', '[1]', 'null', '7']) {
        const r = await fetch(`${hub.url}/dev/${route}`, { method: 'POST', body });
        expect({ route, body, status: r.status }).toEqual({ route, body, status: 400 });
      }
    }
  });
});

describe('dev hub platform API', () => {
  it('answers provider status per key: active, configured (pending with next steps), 401 invalid for unknown keys', async () => {
    hub = await startDevHub({ token: TEST_KEY, statuses: { 'sk-prov-pending-0000': 'pending' } });
    const status = async (key: string) => {
      const r = await fetch(`${hub!.url}/api/v1/provider/status`, { headers: { authorization: `Bearer ${key}` } });
      return { code: r.status, body: (await r.json()) as Record<string, unknown> };
    };
    expect(await status(TEST_KEY)).toMatchObject({ code: 200, body: { status: 'active', can_connect: true, api_key_valid: true } });
    const pending = await status('sk-prov-pending-0000');
    expect(pending).toMatchObject({ code: 200, body: { status: 'pending', can_connect: false, api_key_valid: true, step: 1, total_steps: 4 } });
    expect((pending.body.next_steps as string[]).length).toBeGreaterThan(0);
    expect(await status('sk-prov-nobody')).toMatchObject({ code: 401, body: { api_key_valid: false, can_connect: false } });
    const set = await fetch(`${hub.url}/dev/status`, { method: 'POST', body: JSON.stringify({ key: 'sk-prov-nobody', status: 'suspended' }) });
    expect(set.status).toBe(200);
    expect((await status('sk-prov-nobody')).body).toMatchObject({ status: 'suspended', api_key_valid: true });
    expect((await fetch(`${hub.url}/dev/status`, { method: 'POST', body: JSON.stringify({ key: 'k', status: 'royal' }) })).status).toBe(400);
    expect((await fetch(`${hub.url}/api/v1/provider/me/stats`)).status).toBe(401);
  });

  it('serves the catalogue (page_size) and model demand in the Go shapes', async () => {
    hub = await startDevHub();
    const cat = (await (await fetch(`${hub.url}/api/v1/models?page_size=200`)).json()) as {
      code: number;
      data: { list: Array<{ id: string; active: boolean }>; total: number };
    };
    expect(cat.code).toBe(0);
    expect(cat.data.list.length).toBe(cat.data.total);
    expect(cat.data.list.map((m) => m.id)).toContain('meta-llama/Llama-3.1-8B-Instruct');
    const two = (await (await fetch(`${hub.url}/api/v1/models?page_size=2`)).json()) as typeof cat;
    expect(two.data.list).toHaveLength(2);
    const demand = (await (await fetch(`${hub.url}/api/v1/stats/model-demand`)).json()) as { code: number; data: { models: Array<Record<string, unknown>> } };
    expect(demand.code).toBe(0);
    expect(demand.data.models[0]).toMatchObject({
      model_id: expect.any(String),
      input_price: expect.any(Number),
      output_price: expect.any(Number),
      tier: expect.any(String),
    });
  });
});
