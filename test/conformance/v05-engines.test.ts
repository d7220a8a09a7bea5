// Conformance with what the v0.5 network measures of a node's engines (../shared/HUB-PROTOCOL.md, "What the
// v0.5 network asks beyond the wire"), tried as the network tries a node: `swan-provider run` as a child process
// (test/support/conformance/cli-agent.ts), the Go-dialect hub stand-in (go-hub.ts), and engines in the states the
// network meets (test/support/conformance/engines.ts): a dead vLLM behind a live model list, a model whose chat
// template leaks, an upstream that answers 502 once, an embeddings and images server, an Ollama engine. One
// describe per item of the engine side of the network's checks.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFakeBin, fixture, writeFakeNvidiaSmi, type FakeBin } from '../support/gpu/fake-tools';
import { until } from '../support/stack';
import { repoRoot } from '../support/traces';
import { startGoHub, type Frame, type GoHub } from '../support/conformance/go-hub';
import { spawnAgent, type RunningAgent } from '../support/conformance/cli-agent';
import { deadVllm, embeddingsEngine, flakyVllm, leakyVllm, ollamaEngine, type StandInEngine } from '../support/conformance/engines';
import { startTestEngine, type TestEngine } from '../support/engine-server';

const KEY = 'sk-prov-conformance-v05-00000000';
const ENGINE_KEY = 'sk-engine-only-the-agent-knows';
const M = {
  dead: 'org/dead-model',
  leaky: 'org/leaky-chatml',
  flaky: 'org/flaky-upstream',
  embed: 'org/bge-small',
  image: 'org/sdxl-turbo',
  ollama: 'qwen2.5:0.5b',
  strict: 'org/keyed-model',
  bad: 'org/refuses-400',
};

let bin: FakeBin;
let hub: GoHub;
let agent: RunningAgent;
const e: {
  dead?: StandInEngine;
  leaky?: StandInEngine;
  flaky?: StandInEngine;
  embed?: StandInEngine;
  ollama?: StandInEngine;
  strict?: TestEngine;
  bad?: TestEngine;
} = {};
let seq = 0;
const rid = (label: string): string => `v05-${label}-${++seq}`;

beforeAll(async () => {
  bin = makeFakeBin();
  writeFakeNvidiaSmi(bin, fixture('nvidia/rtx3080'));
  [e.dead, e.leaky, e.flaky, e.embed, e.ollama] = await Promise.all([
    deadVllm(M.dead),
    leakyVllm(M.leaky),
    flakyVllm(M.flaky),
    embeddingsEngine({ embed: M.embed, image: M.image }),
    ollamaEngine(M.ollama),
  ]);
  e.strict = await startTestEngine({ engineType: 'vllm', apiKey: ENGINE_KEY, models: [M.strict], mode: { generate: 3 } });
  e.bad = await startTestEngine({
    engineType: 'vllm',
    models: [M.bad],
    mode: { status: 400, body: { object: 'error', message: "This model's maximum context length is 4096 tokens", type: 'BadRequestError', code: 400 } },
  });
  hub = await startGoHub({ token: KEY });
  agent = spawnAgent({
    hub,
    key: KEY,
    bin,
    // The deep health check at its default cadence (the first check and every 10th); health every second.
    agent: { HeartbeatIntervalSeconds: 0.5, HealthCheckIntervalSeconds: 1 },
    models: {
      [M.dead]: { endpoint: e.dead.url },
      [M.leaky]: { endpoint: `${e.leaky.url}/v1` },
      [M.flaky]: { endpoint: e.flaky.url },
      [M.embed]: { endpoint: e.embed.url, category: 'embedding' },
      [M.image]: { endpoint: e.embed.url, category: 'image' },
      [M.ollama]: { endpoint: e.ollama.url, api_key: ENGINE_KEY },
      [M.strict]: { endpoint: e.strict.url, api_key: ENGINE_KEY },
      [M.bad]: { endpoint: e.bad.url },
    },
  });
  await hub.waitFor((f) => f.type === 'heartbeat', 'the first heartbeat', 30_000);
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await hub?.close();
  await Promise.all(Object.values(e).map((x) => x?.close()));
  bin?.cleanup();
});

const chat = (model: string, content: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  model,
  messages: [{ role: 'user', content }],
  ...extra,
});

/** The latest model_health the hub heard for `model` (model_health_update or a heartbeat). */
function healthHeard(model: string): string | undefined {
  const f = [...hub.frames]
    .reverse()
    .find(
      (x) =>
        (x.type === 'model_health_update' || x.type === 'heartbeat') && (x.payload.model_health as Record<string, string> | undefined)?.[model] !== undefined,
    );
  return (f?.payload.model_health as Record<string, string> | undefined)?.[model];
}

function request(type: string, payload: Record<string, unknown>): { id: string; reply: (replyType: string) => Promise<Frame> } {
  const id = rid(type);
  hub.send({ type, request_id: id, payload: { ...payload, request_id: id } });
  return {
    id,
    reply: (replyType) => hub.waitFor((f) => f.type === replyType && (f.payload.request_id === id || f.envelopeId === id), `${replyType} for ${id}`, 20_000),
  };
}

describe('one engine-call pipeline: every kind of call reaches the engine with its key', () => {
  it('hub inference, the deep health check, warmup and a benchmark all carry the engine key to an engine that needs one', async () => {
    const id = rid('keyed');
    hub.inference(id, M.strict, chat(M.strict, 'hi', { stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    expect(end.payload).not.toHaveProperty('error');
    expect((await request('warmup', { model_id: M.strict, warmup_type: 'inference' }).reply('ack')).payload).toMatchObject({ model_id: M.strict });
    const bench = await request('benchmark', { benchmark_id: 'b-key', model_id: M.strict, prompts: [{ id: 'p', prompt: 'count' }], timeout_ms: 0 }).reply(
      'benchmark_response',
    );
    expect((bench.payload.results as Array<Record<string, unknown>>)[0]).not.toHaveProperty('error');
    const posts = e.strict!.requests.filter((r) => r.method === 'POST');
    // The health probe (max_tokens 1), the hub's request, the warmup greeting (64) and the benchmark prompt (500).
    expect(posts.map((r) => (r.body as Record<string, unknown>).max_tokens).sort()).toEqual(expect.arrayContaining([1, 64, 500]));
    for (const r of e.strict!.requests.filter((q) => q.method === 'POST'))
      expect(r.headers.authorization, `${r.method} ${r.path}`).toBe(`Bearer ${ENGINE_KEY}`);
    // Discovery, health and metadata reads carry it too; the one read without it asks whether the model list is public
    // (if it is, only a completion proves the key).
    const keyless = e.strict!.requests.filter((q) => q.headers.authorization !== `Bearer ${ENGINE_KEY}`).map((q) => `${q.method} ${q.path}`);
    expect(new Set(keyless)).toEqual(new Set(['GET /v1/models']));
  });
});

describe('one retry of a transient engine failure (TestHandleInferenceEnforcement)', () => {
  it('a 502 before any byte reached the hub is tried once more: the hub gets the answer, never the 502', async () => {
    const before = e.flaky!.generations().filter((g) => g.body.max_tokens !== 1).length;
    const id = rid('flaky');
    hub.inference(id, M.flaky, chat(M.flaky, 'hi', { stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    expect(end.payload).toMatchObject({ tokens_input: 3, tokens_output: 1 });
    expect(end.payload).not.toHaveProperty('status_code');
    expect(
      hub
        .forRequest(id)
        .filter((f) => f.type === 'stream_chunk')
        .every((f) => f.payload.error === undefined),
    ).toBe(true);
    expect(e.flaky!.generations().filter((g) => g.body.max_tokens !== 1).length - before).toBe(2);
  });

  it('a 400 is not retried: the hub gets it at once, as an error chunk then stream_end 400', async () => {
    const before = e.bad!.requests.filter((r) => r.method === 'POST' && (r.body as Record<string, unknown>).max_tokens !== 1).length;
    const id = rid('bad');
    hub.inference(id, M.bad, chat(M.bad, 'a very long prompt', { stream: true }), true);
    const end = await hub.waitFor((f) => f.type === 'stream_end' && f.payload.request_id === id, 'stream_end');
    expect(end.payload).toMatchObject({ status_code: 400 });
    expect(e.bad!.requests.filter((r) => r.method === 'POST' && (r.body as Record<string, unknown>).max_tokens !== 1).length - before).toBe(1);
  });
});

describe('deep health (model_health_deepcheck_test.go)', () => {
  it('a dead engine behind a live model list is not healthy: the hub hears unhealthy, the others stay healthy', async () => {
    await until(() => healthHeard(M.dead) === 'unhealthy', 'the dead model reported unhealthy', 15_000);
    // It was found by a real one-token chat, with the engine's own model name.
    const probe = e.dead!.generations().find((g) => g.path === '/v1/chat/completions');
    expect(probe?.body).toMatchObject({ model: M.dead, max_tokens: 1 });
    expect(e.dead!.asked.some((a) => a.path === '/v1/models')).toBe(true);
    expect(healthHeard(M.leaky)).toBe('healthy');
    expect(healthHeard(M.bad)).toBe('healthy'); // a 400 to the probe is the engine's opinion of the prompt
    // Embedding and image models are never probed with chat.
    expect(e.embed!.generations().filter((g) => g.path === '/v1/chat/completions')).toEqual([]);
    expect(healthHeard(M.embed)).toBe('healthy');
    // Paid requests are not sent to it: the hub routes by the health it heard; a request that comes anyway is refused as
    // a temporary outage (503, which the openai SDK retries; never 404, which it raises as NotFoundError).
    const id = rid('dead');
    hub.inference(id, M.dead, chat(M.dead, 'hi'), false);
    const ack = await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === id, 'ack');
    expect(ack.payload).toMatchObject({ status_code: 503, response: null });
  });

  it('doctor says which failure it is, with its stable reason code', async () => {
    const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
      const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'swan-provider.js'), 'doctor', '--home', agent.home], {
        env: { PATH: bin.dir, HOME: agent.userHome, LANG: 'C' },
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('exit', (code) => resolve({ code, text }));
    });
    expect(out.code).toBe(1);
    expect(out.text).toMatch(new RegExp(`${M.dead} at .* \\[engine_error\\]: engine error: a 1-token chat`));
    expect(out.text).toContain(`${M.flaky} answers a 1-token chat`);
  }, 60_000);
});

describe('warmup validated (warmup_validation.go)', () => {
  it('a greeting that leaks the chat template fails the warmup, and says what to fix', async () => {
    const ack = await request('warmup', { model_id: M.leaky, warmup_type: 'inference' }).reply('ack');
    expect(ack.payload).toMatchObject({ model_id: M.leaky, success: false });
    expect(String(ack.payload.error)).toContain("the chat template leaks `<|im_start|>`: check the engine's chat template and stop tokens");
    // The greeting among the engine's calls (a health check's 1-token chat may land after it on a busy machine).
    const greetings = e.leaky!.generations().filter((g) => g.body.max_tokens === 64);
    expect(greetings.map((g) => g.body)).toEqual([expect.objectContaining({ model: M.leaky, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })]);
  });

  it('Ollama: the load call goes through the pipeline with the engine key, then the greeting is checked', async () => {
    const ack = await request('warmup', { model_id: M.ollama, warmup_type: 'inference' }).reply('ack');
    expect(ack.payload).toMatchObject({ model_id: M.ollama, success: true, load_time_ms: expect.any(Number) });
    const calls = e.ollama!.generations().filter((g) => g.path === '/api/generate' || (g.path === '/v1/chat/completions' && g.body.max_tokens === 64));
    expect(calls.map((g) => [g.path, g.authorization])).toEqual([
      ['/api/generate', `Bearer ${ENGINE_KEY}`],
      ['/v1/chat/completions', `Bearer ${ENGINE_KEY}`],
    ]);
    expect(calls[0]!.body).toMatchObject({ model: M.ollama, prompt: '', keep_alive: '30m', stream: false });
  });
});

describe('operations (operations.go)', () => {
  it('operation "embeddings" reaches /v1/embeddings and comes back on the result path, with its usage', async () => {
    const id = rid('embed');
    hub.send({
      type: 'inference',
      request_id: id,
      payload: {
        endpoint_id: `ep-${id}`,
        model_id: M.embed,
        operation: 'embeddings',
        stream: true,
        request: { model: M.embed, input: ['one two three', 'four'] },
      },
    });
    const ack = await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === id, 'the embeddings result');
    expect(ack.payload).toMatchObject({
      status_code: 200,
      response: { object: 'list', model: M.embed, data: [{ index: 0 }, { index: 1 }], usage: { prompt_tokens: 4 } },
    });
    expect(hub.forRequest(id).map((f) => f.type)).toEqual(['ack']);
    expect(e.embed!.generations().at(-1)).toMatchObject({ path: '/v1/embeddings', body: { model: M.embed, input: ['one two three', 'four'] } });
  });

  it('without an operation the category routes an image request; usage in input/output names gets the chat names too', async () => {
    const id = rid('image');
    hub.inference(id, M.image, { model: M.image, prompt: 'a red fox in snow', size: '1024x1024' }, false);
    const ack = await hub.waitFor((f) => f.type === 'ack' && f.payload.request_id === id, 'the image result');
    expect(ack.payload).toMatchObject({
      status_code: 200,
      response: { data: [{ b64_json: expect.any(String) }], usage: { input_tokens: 12, output_tokens: 4160, prompt_tokens: 12, completion_tokens: 4160 } },
    });
    expect(e.embed!.generations().at(-1)!.path).toBe('/v1/images/generations');
  });
});

describe('the smaller engine items', () => {
  it('a benchmark with timeout_ms 0 runs every prompt (30 s each); a null prompt list is an empty benchmark, not a failure', async () => {
    const b = await request('benchmark', {
      benchmark_id: 'b-zero',
      model_id: M.flaky,
      timeout_ms: 0,
      prompts: [{ id: 'a', prompt: 'say ok', expected_answer: 'OK' }],
    }).reply('benchmark_response');
    expect(b.payload).toMatchObject({ benchmark_id: 'b-zero', results: [{ prompt_id: 'a', answer: 'ok', correct: true }] });
    expect(b.payload).not.toHaveProperty('error');
    const empty = await request('benchmark', { benchmark_id: 'b-null', model_id: M.flaky, timeout_ms: 0, prompts: null }).reply('benchmark_response');
    expect(empty.payload).toMatchObject({ benchmark_id: 'b-null', results: [], total_latency_ms: 0 });
    expect(empty.payload).not.toHaveProperty('error');
  });

  it("Ollama's trained maximum is never declared as its window (past num_ctx a prompt is silently cut)", async () => {
    const reg = [...hub.of('register')].at(-1)!;
    const entry = (reg.payload.model_hashes as Array<Record<string, unknown>>).find((h) => h.model_id === M.ollama);
    expect(entry?.context_length).not.toBe(32768);
    expect(entry?.context_source).not.toBe('detected');
    expect(e.ollama!.asked.some((a) => a.path === '/api/show')).toBe(true);
  });
});
