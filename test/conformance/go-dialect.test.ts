// Conformance with the real hub's dialect (../shared/HUB-PROTOCOL.md: what the Go computing-provider
// sends and expects). The agent runs as users run it: `swan-provider run` as a child process, a temp
// home with a plain config.toml (defaults everywhere but the hub address, the key and, for speed, the
// heartbeat interval), a stand-in nvidia-smi replaying a real RTX 3080 capture on PATH, and real test
// engines. The hub is a stand-in written from HUB-PROTOCOL.md with the real `ws` server (test/support/conformance/go-hub.ts),
// not our dev hub: Go-typed acks ("request_id": ""), no resume-v1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFakeBin, fixture, writeFakeNvidiaSmi, type FakeBin } from '../support/gpu/fake-tools';
import { startTestEngine, type TestEngine } from '../support/engine-server';
import { summarizeTrace } from '../support/traces';
import { until } from '../support/stack';
import { startGoHub, type Frame, type GoHub } from '../support/conformance/go-hub';
import { spawnAgent, type RunningAgent, type SpawnOptions } from '../support/conformance/cli-agent';

const KEY = 'sk-prov-conformance-0000000000';
const QWEN = 'Qwen2.5-1.5B-Instruct'; // the vLLM capture's model (max_model_len 4096)
// secp256k1 private key 1: its public key is the generator G (a Go provider key placed in ~/.swan/computing).
const KEY_ONE = Buffer.concat([Buffer.alloc(31), Buffer.from([1])]);
const G = '0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';

function spawn(o: Omit<SpawnOptions, 'key'>): RunningAgent {
  return spawnAgent({ ...o, key: KEY });
}

const chat = (content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: QWEN,
  messages: [{ role: 'user', content }],
  ...extra,
});

let bin: FakeBin;
let hub: GoHub;
let defaultsHub: GoHub;
let agent: RunningAgent;
let defaultsAgent: RunningAgent;
const engines: Record<'usage' | 'noUsage' | 'broken' | 'long', TestEngine> = {} as never;
let defaultsRegisteredAt = 0;
let idSeq = 0;
const rid = (label: string): string => `conf-${label}-${++idSeq}`;

beforeAll(async () => {
  bin = makeFakeBin();
  writeFakeNvidiaSmi(bin, fixture('nvidia/rtx3080'));
  engines.usage = await startTestEngine({ engineType: 'vllm', chatTrace: 'vllm-chat-reasoning-include-usage.sse' });
  engines.noUsage = await startTestEngine({ engineType: 'vllm', chatTrace: 'vllm-chat-basic.sse' });
  engines.broken = await startTestEngine({
    engineType: 'vllm',
    mode: { status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens", type: 'BadRequestError', code: 400 } },
  });
  engines.long = await startTestEngine({ engineType: 'vllm', mode: { generate: 100_000, delayMs: 2 } });
  hub = await startGoHub({ token: KEY });
  defaultsHub = await startGoHub({ token: KEY });
  // The agent with default timings starts first: its first heartbeat is due 30 s after its register ack.
  defaultsAgent = spawn({ hub: defaultsHub, models: { [QWEN]: { endpoint: engines.usage.url } }, bin, goKey: KEY_ONE });
  const reg = defaultsHub.waitFor((f) => f.type === 'register', 'register (defaults agent)', 25_000).then((f) => (defaultsRegisteredAt = f.at));
  agent = spawn({
    hub,
    bin,
    agent: { HeartbeatIntervalSeconds: 0.5 },
    models: {
      [QWEN]: { endpoint: engines.usage.url },
      'qwen-override': { endpoint: engines.usage.url, local_model: QWEN, context_length: 2048 },
      'no-usage': { endpoint: `${engines.noUsage.url}/v1`, local_model: QWEN },
      broken: { endpoint: engines.broken.url, local_model: QWEN },
      long: { endpoint: engines.long.url, local_model: QWEN },
    },
  });
  await hub.waitFor((f) => f.type === 'heartbeat', 'the first heartbeat (registration completed on a Go-typed ack)', 25_000);
  await reg;
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await defaultsAgent?.stop();
  await hub?.close();
  await defaultsHub?.close();
  for (const e of Object.values(engines)) await e?.close();
  bin?.cleanup();
});

/** The last register frame that carries every model's detected window (detection re-registers). */
async function fullRegister(): Promise<Frame> {
  return hub.waitFor(
    (f) =>
      f.type === 'register' &&
      Array.isArray(f.payload.model_hashes) &&
      (f.payload.model_hashes as Array<Record<string, unknown>>).every((m) => typeof m.context_length === 'number'),
    'a register with every context_length',
    15_000,
  );
}

describe('registration (Go RegisterPayload, v0.5 fields)', () => {
  it('a Go-typed ack ("request_id": "") completes registration: model health, then heartbeats', async () => {
    const firstAckIndex = hub.frames.findIndex((f) => f.type === 'register');
    const after = hub.frames.slice(firstAckIndex + 1).map((f) => f.type);
    expect(after).toContain('model_health_update');
    expect(after).toContain('heartbeat');
    expect(after.indexOf('model_health_update')).toBeLessThan(after.indexOf('heartbeat'));
  });

  it('register: node_id = worker_addr (130-hex secp256k1 key), owner_addr "", inference+verification first, cp_version', async () => {
    const reg = await fullRegister();
    const p = reg.payload;
    expect(reg.envelopeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(p.node_id).toMatch(/^04[0-9a-f]{128}$/);
    expect(p.worker_addr).toBe(p.node_id);
    expect(p.owner_addr).toBe('');
    expect(p.token).toBe(KEY);
    expect((p.capabilities as string[]).slice(0, 2)).toEqual(['inference', 'verification']);
    expect(p.capabilities).toContain('resume-v1'); // offered only; this hub does not take it up
    expect(p.cp_version).toMatch(/^\d+\.\d+\.\d+/);
    expect([...(p.models as string[])].sort()).toEqual(['broken', 'long', 'no-usage', QWEN, 'qwen-override'].sort());
  });

  it('hardware in the Go form from the stand-in nvidia-smi (RTX 3080 capture)', async () => {
    const p = (await fullRegister()).payload;
    expect(p.hardware).toEqual({
      gpu_type: 'RTX 3080',
      gpu_model: 'NVIDIA GeForce RTX 3080',
      vram_gb: 10,
      gpu_count: 1,
      compute_capability: '8.6',
      driver_version: '580.126.09',
      cuda_version: '13.0',
      serving_engine: 'vllm',
    });
  });

  it('model_hashes: context_length detected from vLLM max_model_len, or the models.json override; no hash_algo without a hash', async () => {
    const hashes = (await fullRegister()).payload.model_hashes as Array<Record<string, unknown>>;
    const byId = Object.fromEntries(hashes.map((h) => [h.model_id, h]));
    expect(byId[QWEN]).toEqual({ model_id: QWEN, context_length: 4096, context_source: 'detected' });
    expect(byId['qwen-override']).toEqual({ model_id: 'qwen-override', context_length: 2048, context_source: 'override' });
    for (const h of hashes) {
      expect(h).not.toHaveProperty('hash_algo');
      expect(h).not.toHaveProperty('weight_hash');
    }
  });
});

describe('heartbeat (collectMetrics keys and units)', () => {
  it('every configured interval, with GPU metrics from the capture in percent / MiB / °C / W and request metrics', async () => {
    const start = hub.frames.length;
    await until(() => hub.frames.slice(start).filter((f) => f.type === 'heartbeat').length >= 4, '4 more heartbeats', 10_000);
    const beats = hub.frames.slice(start).filter((f) => f.type === 'heartbeat');
    const gaps = beats.slice(1).map((b, i) => b.at - beats[i]!.at);
    // 0.5 s apart (loose bounds: the machine may be busy; the default is 30 s, tested below).
    for (const g of gaps) {
      expect(g).toBeGreaterThan(250);
      expect(g).toBeLessThan(2000);
    }
    const hb = beats.at(-1)!.payload;
    expect(hb.node_id).toMatch(/^04[0-9a-f]{128}$/);
    expect(typeof hb.timestamp).toBe('number');
    expect(hb.metrics).toMatchObject({
      gpu_utilization: 0,
      memory_utilization: 46.92, // 4805 / 10240 MiB
      gpu_0_utilization: 0,
      gpu_0_memory_used_mb: 4805,
      gpu_0_memory_total_mb: 10240,
      gpu_0_temperature_c: 43,
      gpu_0_power_draw_w: 75,
      active_requests: expect.any(Number),
      total_requests: expect.any(Number),
      requests_per_minute: expect.any(Number),
      avg_latency_ms: expect.any(Number),
      tokens_per_second: expect.any(Number),
    });
    expect(hb.hardware).toMatchObject({ gpu_type: 'RTX 3080', vram_gb: 10 });
  });
});

describe('serving', () => {
  it('a stream: request_id in the envelope and payload of every chunk and the end; usage from the engine', async () => {
    const id = rid('stream');
    hub.inference(id, QWEN, chat('hi', { stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    const mine = hub.forRequest(id);
    for (const f of mine) {
      expect(f.envelopeId).toBe(id);
      expect(f.payload.request_id).toBe(id);
    }
    const chunks = mine.filter((f) => f.type === 'stream_chunk');
    expect(chunks.at(-1)!.payload).toMatchObject({ chunk: null, done: true });
    expect(chunks.every((c) => c.payload.error === undefined)).toBe(true);
    const usage = summarizeTrace('vllm-chat-reasoning-include-usage.sse').usage!;
    expect(end.payload).toMatchObject({ tokens_input: usage.prompt_tokens, tokens_output: usage.completion_tokens, latency_ms: expect.any(Number) });
    expect(end.payload).not.toHaveProperty('status_code');
    expect(end.payload).not.toHaveProperty('error');
  });

  it('non-stream: an ack {request_id, response, status_code, latency_ms} with the id in the envelope too', async () => {
    const id = rid('once');
    hub.inference(id, QWEN, chat('hi'), false);
    const ack = await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === id, 'result ack');
    expect(ack.envelopeId).toBe(id);
    expect(ack.payload).toMatchObject({ status_code: 200, latency_ms: expect.any(Number), response: { object: 'chat.completion' } });
  });

  it('no estimates on the wire: an engine that reports no usage gets no tokens_input / tokens_output', async () => {
    const id = rid('nousage');
    hub.inference(id, 'no-usage', chat('hi', { model: 'no-usage', stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    expect(end.payload).not.toHaveProperty('tokens_input');
    expect(end.payload).not.toHaveProperty('tokens_output');
    expect(end.payload).not.toHaveProperty('tokens_estimated');
    expect(end.payload).not.toHaveProperty('status_code');
  });

  it('a stream that fails before any data: an error chunk {chunk:null, done:true, error} first, then stream_end with status_code', async () => {
    const id = rid('broken');
    hub.inference(id, 'broken', chat('a very long prompt', { model: 'broken', stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    const mine = hub.forRequest(id);
    expect(mine.map((f) => f.type)).toEqual(['stream_chunk', 'stream_end']);
    expect(mine[0]!.payload).toMatchObject({ request_id: id, chunk: null, done: true, error: expect.stringContaining('maximum context length') });
    expect(end.payload).toMatchObject({ status_code: 400, error: expect.stringContaining('maximum context length') });
    expect(end.payload).not.toHaveProperty('tokens_input');
  });

  it('refusals go out on the result paths, never as error frames: unknown model, invalid request', async () => {
    const s = rid('unknown-stream');
    const n = rid('unknown-once');
    const bad = rid('invalid');
    hub.inference(s, 'no/such-model', chat('hi', { stream: true }), true);
    hub.inference(n, 'no/such-model', chat('hi'), false);
    hub.send({ type: 'inference', request_id: bad, payload: { model_id: QWEN, stream: true, request: { model: QWEN, max_tokens: 5 } } });
    const endS = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === s, 'stream_end for the unknown model');
    const ackN = await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === n, 'ack for the unknown model');
    const endBad = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === bad, 'stream_end for the invalid request');
    expect(hub.forRequest(s).map((f) => f.type)).toEqual(['stream_chunk', 'stream_end']);
    expect(hub.forRequest(s)[0]!.payload).toMatchObject({ chunk: null, done: true, error: expect.any(String) });
    expect(endS.payload).toMatchObject({ status_code: 404, error: expect.any(String) });
    expect(ackN.envelopeId).toBe(n);
    expect(ackN.payload).toMatchObject({ status_code: 404, response: null, error: expect.any(String) });
    expect(hub.forRequest(bad).map((f) => f.type)).toEqual(['stream_chunk', 'stream_end']);
    expect(endBad.payload).toMatchObject({ status_code: 400, error: expect.stringMatching(/messages|prompt/) });
    expect(hub.of('error')).toEqual([]);
  });

  it('hub cancel: the engine request is aborted and nothing more is sent for it (no chunk, no stream_end)', async () => {
    const id = rid('cancel');
    const aborted = engines.long.abortedCount;
    hub.inference(id, 'long', chat('long', { model: 'long', stream: true }), true);
    await hub.waitFor((f) => f.type === 'stream_chunk' && f.payload.request_id === id, 'first chunk');
    hub.cancel(id, 'consumer_disconnected');
    await until(() => engines.long.abortedCount > aborted, 'engine request aborted', 10_000);
    const countAtAbort = hub.forRequest(id).length;
    // A round trip after the abort: anything the agent would still send for `id` would be on the wire before this answer.
    const probe = rid('after-cancel');
    hub.inference(probe, QWEN, chat('still there?'), false);
    await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === probe, 'probe answer');
    expect(hub.forRequest(id).length).toBe(countAtAbort);
    expect(hub.forRequest(id).some((f) => f.type === 'stream_end')).toBe(false);
  });

  it('a cancel in the same read as its inference, behind another start: the engine is never called for it, nothing is sent', async () => {
    const first = rid('burst-first');
    const cancelled = rid('burst-cancelled');
    const calls = engines.long.requests.length;
    const inference = (id: string) => ({
      type: 'inference',
      request_id: id,
      payload: { endpoint_id: `ep-${id}`, model_id: 'long', stream: true, request: chat(id, { model: 'long', stream: true }) },
    });
    // One read: the cancel is read before the second request's engine call is made (starts are paced one per turn).
    hub.sendTogether([
      inference(first),
      inference(cancelled),
      { type: 'cancel', request_id: cancelled, payload: { request_id: cancelled, reason: 'consumer_disconnected' } },
    ]);
    await hub.waitFor((f) => f.type === 'stream_chunk' && f.payload.request_id === first, 'first chunk of the first');
    hub.cancel(first, 'done');
    const probe = rid('after-burst');
    hub.inference(probe, QWEN, chat('still there?'), false);
    await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === probe, 'probe answer');
    const prompts = engines.long.requests.slice(calls).map((q) => JSON.stringify(q.body));
    expect(prompts.filter((b) => b.includes(first))).toHaveLength(1);
    expect(prompts.filter((b) => b.includes(cancelled))).toEqual([]);
    expect(hub.forRequest(cancelled)).toEqual([]);
  });

  it('an unknown message type is logged once per type and never answered', async () => {
    hub.send({ type: 'teleport', request_id: 'conf-teleport-1', payload: { to: 'mars' } });
    hub.send({ type: 'teleport', request_id: 'conf-teleport-2', payload: {} });
    const probe = rid('after-unknown');
    hub.inference(probe, QWEN, chat('hi'), false);
    await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === probe, 'probe answer');
    expect(hub.frames.some((f) => String(f.payload.request_id ?? f.envelopeId ?? '').startsWith('conf-teleport'))).toBe(false);
    await until(() => /unknown type "teleport"/.test(agent.output()), 'the log line', 5000);
    expect(agent.output().match(/unknown type "teleport"/g)).toHaveLength(1);
  });
});

describe('the link (timings of inference_client.go)', () => {
  it('without resume-v1 from the hub, a dropped link aborts in-flight requests at the engine; the first redial is immediate', async () => {
    const id = rid('drop');
    const aborted = engines.long.abortedCount;
    hub.inference(id, 'long', chat('long', { model: 'long', stream: true }), true);
    await hub.waitFor((f) => f.type === 'stream_chunk' && f.payload.request_id === id, 'first chunk');
    const lastRegister = hub.of('register').at(-1)!.at;
    await until(() => Date.now() - lastRegister > 1100, 'the link has been up for over a second');
    const registers = hub.of('register').length;
    const from = hub.frames.length;
    const outputBefore = agent.output().length;
    const droppedAt = Date.now();
    hub.drop();
    await until(() => engines.long.abortedCount > aborted, 'engine request aborted after the drop', 10_000);
    const reg = await hub.waitFor((f) => f.type === 'register', 'register after the drop', 10_000, from);
    expect(hub.of('register').length).toBeGreaterThan(registers);
    // Immediate (Go: first attempt at once, then 1, 2, 4 … s), said in the log, and well before a 1 s backoff.
    expect(agent.output().slice(outputBefore)).toMatch(/hub link down \(.*\); redialling now/);
    expect(reg.at - droppedAt).toBeLessThan(2500);
    await hub.waitFor((f) => f.type === 'heartbeat' && f.at > reg.at, 'heartbeats again');
    expect(hub.forRequest(id).some((f) => f.type === 'stream_end')).toBe(false);
  });

  it('no register ack within 3 heartbeat ticks: the provider drops the connection and dials again', async () => {
    hub.behaviour.ackRegister = false;
    const from = hub.frames.length;
    const closed = new Promise<number>((resolve) => hub.once('close', () => resolve(Date.now())));
    hub.drop();
    const unacked = await hub.waitFor((f) => f.type === 'register', 'a register that gets no ack', 10_000, from);
    const closedAt = await closed.then(() => new Promise<number>((resolve) => hub.once('close', () => resolve(Date.now()))));
    // 3 ticks of the 0.5 s heartbeat.
    expect(closedAt - unacked.at).toBeGreaterThanOrEqual(1400);
    expect(closedAt - unacked.at).toBeLessThan(6000);
    expect(hub.frames.slice(from).some((f) => f.type === 'heartbeat' && f.at < closedAt)).toBe(false);
    hub.behaviour.ackRegister = true;
    await hub.waitFor((f) => f.type === 'heartbeat' && f.at > closedAt, 'registered again', 10_000);
  });
});

describe('defaults', () => {
  it('reuses the Go provider key from ~/.swan/computing (node_id = its public key) and says so', async () => {
    const reg = await defaultsHub.waitFor((f) => f.type === 'register', 'register');
    expect(reg.payload.node_id).toBe(G);
    expect(reg.payload.worker_addr).toBe(G);
    await until(() => /reusing the Go computing-provider's node key/.test(defaultsAgent.output()), 'the log line', 5000);
  });

  it('the heartbeat interval is 30 s by default', async () => {
    const first = await defaultsHub.waitFor((f) => f.type === 'heartbeat', 'the first heartbeat', 55_000);
    const afterRegister = first.at - defaultsRegisteredAt;
    expect(afterRegister).toBeGreaterThan(29_500);
    expect(afterRegister).toBeLessThan(45_000); // not the old 54 s
  }, 60_000);
});
