// The live engine suite: the real llama-server of ../shared/engines/llama.cpp behind the agent run as
// users run it (`swan-provider run`, a child process), the dev hub (`swan-provider dev-hub`) and the
// local gateway, driven by the official `openai` client's plain loop. Covers
// usage chunks, names, capacity from the engine, delivered tokens, fast failover, engine keys, the
// loading phase, llama timings, models.json edits — plus discovery on a chosen port, --alias,
// --api-key, -np 1/2/4, and a kill and restart mid-stream.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../src/shared/views/snapshot';
import type { EndpointState, RequestView } from '../../src/shared/types';
import { GatewayKeys } from '../../src/core/gateway/keys';
import { compositeHash } from '../../src/core/weights/manifest';
import { freePort, tempHome } from '../support/stack';
import { Bridge, Cli, eventually, get, Llama, LLAMA_PRESENT, runCli, SMALL } from '../support/live/llama';
import { writeConfigToml } from '../support/config-toml';

const KEY = 'sk-prov-live-1234567890';
const ENGINE_KEY = 'engine-key-1';
const MSG = [{ role: 'user' as const, content: 'hello there' }];
const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';

interface World {
  a: Llama; // small.gguf, -np 2, found by discovery on its port
  b: Llama; // tiny, --api-key, --alias my-model, -np 1, in models.json as "keyed"
  hub: Cli;
  hubUrl: string;
  agent: Cli;
  bridge: Bridge;
  home: string;
  gatewayUrl: string;
  keys: GatewayKeys;
  cleanup: Array<() => Promise<unknown> | unknown>;
}
let w: World;

function writeModels(models: Record<string, unknown>, raw?: string): void {
  const file = path.join(w.home, 'models.json');
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, raw ?? JSON.stringify(models, null, 2));
  fs.renameSync(tmp, file);
}

const snapshot = () => w.bridge.invoke<AgentSnapshot>('snapshot.get');
async function endpointOf(model: string, url: string): Promise<EndpointState | undefined> {
  return (await snapshot()).models.find((m) => m.id === model)?.endpoints.find((e) => e.url === url);
}
/**
 * The health the hub should hear for a model that answers: `healthy`, or `degraded` while its last warmup
 * failed (these GGUFs have random weights: a greeting never ends as a real model's does).
 */
async function answeringHealth(model: string): Promise<string> {
  return (await snapshot()).models.find((m) => m.id === model)?.warmupFailure ? 'degraded' : 'healthy';
}
async function hubHealth(model: string): Promise<string | undefined> {
  const ps = JSON.parse((await get(`${w.hubUrl}/dev/providers`)).body) as Array<{ connected: boolean; health: Record<string, string>; models: string[] }>;
  const p = ps.find((x) => x.connected);
  return p?.models.includes(model) ? p.health[model] : undefined;
}
const hubClient = () => new OpenAI({ baseURL: `${w.hubUrl}/v1`, apiKey: 'any', maxRetries: 0 });
const gatewayClient = (name: string) => new OpenAI({ baseURL: `${w.gatewayUrl}/v1`, apiKey: w.keys.create(name).key, maxRetries: 0 });
const keyedModels = (apiKey: string, extra: Record<string, unknown> = {}) => ({ keyed: { endpoint: `${w.b.url}/v1`, api_key: apiKey }, ...extra });

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'live llama.cpp' : `live llama.cpp — ${SKIP}`, () => {
  beforeAll(async () => {
    const [pa, pb, ph] = [await freePort(), await freePort(), await freePort()];
    const cleanup: World['cleanup'] = [];
    const a = new Llama(pa, ['-m', SMALL, '-np', '2']);
    const b = new Llama(pb, ['--api-key', ENGINE_KEY, '--alias', 'my-model', '-np', '1']);
    cleanup.push(
      () => a.kill(),
      () => b.kill(),
    );
    await Promise.all([a.start(), b.start()]);
    const hub = new Cli(['dev-hub', '--port', String(ph), '--token', KEY]);
    cleanup.push(() => hub.stop());
    const home = tempHome('swan-live-');
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const keys = new GatewayKeys(home);
    // Picked just before the agent binds it: a port found free while the engines load can be another suite's by then.
    const pg = await freePort();
    writeConfigToml(home, {
      API: { NodeName: 'live' },
      Inference: { WebSocketURL: `ws://127.0.0.1:${ph}`, ServiceURL: `http://127.0.0.1:${ph}`, ApiKey: KEY, Models: ['small', 'keyed', 'four', 'loader'] },
      // The default 30 s health interval: fast recovery must come from the failure path, not the timer.
      Agent: { EngineHosts: [`http://127.0.0.1:${pa}`], EngineHeadersTimeoutSeconds: 1, HeartbeatIntervalSeconds: 2 },
      Gateway: { Enable: true, Listen: `127.0.0.1:${pg}` },
    });
    w = { a, b, hub, hubUrl: `http://127.0.0.1:${ph}`, home, gatewayUrl: `http://127.0.0.1:${pg}`, keys, cleanup } as World;
    writeModels(keyedModels('wrong-key'));
    await hub.waitFor(/dev hub listening/, 'dev hub up');
    const agent = new Cli(['run', '--home', home, '--config', path.join(home, 'config.toml'), '--console', '127.0.0.1:0']);
    cleanup.push(() => agent.stop());
    w.agent = agent;
    const url = (await agent.waitFor(/console: (http:\/\/\S+)/, 'console URL'))[1]!;
    const gatewayUp = new RegExp(`local gateway listening on http://127\\.0\\.0\\.1:${pg} `);
    await eventually(async () => gatewayUp.test(agent.err) || /local gateway could not start/.test(agent.err), 'the gateway started or said why not', 20_000);
    expect(agent.err).toMatch(gatewayUp);
    w.bridge = await Bridge.open(url);
    cleanup.push(() => w.bridge.close());
    await eventually(async () => (await hubHealth('small')) === 'healthy', 'small announced and healthy at the hub', 20_000);
  }, 90_000);

  afterAll(async () => {
    for (const c of (w?.cleanup ?? []).reverse()) await c();
  }, 30_000);

  it('discovers llama-server on the chosen port and announces its file stem, never the path', async () => {
    const snap = await snapshot();
    const engine = snap.engines.find((e) => e.url === w.a.url);
    expect(engine).toMatchObject({ type: 'llamacpp', reachable: true, models: [SMALL] });
    const ids = (JSON.parse((await get(`${w.hubUrl}/v1/models`)).body) as { data: Array<{ id: string }> }).data.map((m) => m.id);
    expect(ids).toContain('small');
    expect(ids.filter((id) => id.includes('/'))).toEqual([]);
    // The mapping is visible: announced "small" is the engine's /path/small.gguf.
    expect(await endpointOf('small', w.a.url)).toMatchObject({ localModel: SMALL, engineType: 'llamacpp' });
  });

  it('fingerprint: the GGUF llama-server serves (its /props model_path) passes with its true sha256 and fails with a wrong one, the real hash sent', async () => {
    const truth = createHash('sha256').update(fs.readFileSync(SMALL)).digest('hex');
    const verify = async (expected: string, filename = 'small.gguf') =>
      JSON.parse(
        await fetch(`${w.hubUrl}/dev/verify`, {
          method: 'POST',
          body: JSON.stringify({
            challenge_id: `live-${expected.slice(0, 6)}`,
            challenge_type: 'fingerprint',
            model_id: 'small',
            challenge: { files: [{ filename, expected_hash: expected }] },
          }),
        }).then((r) => r.text()),
      ) as { success: boolean; response: { files: Array<{ filename: string; hash: string; status: string }> } | null; error_code?: string };
    // The first challenge may wait for the first hashing of the file (the node hashes it once, then keeps it).
    const pass = await verify(truth);
    expect(pass).toMatchObject({ success: true, response: { files: [{ filename: 'small.gguf', hash: truth, status: 'pass' }] } });
    const fail = await verify('0'.repeat(64), 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf');
    expect(fail).toMatchObject({ success: false, response: { files: [{ filename: 'Qwen2.5-0.5B-Instruct-Q4_K_M.gguf', hash: truth, status: 'fail' }] } });
    expect(fail.error_code).toBeUndefined();
    // The manifest the node keeps (and whose composite it declares as weight_hash) is of that file.
    const snap = await snapshot();
    expect(snap.weights?.models.find((m) => m.model === 'small')).toMatchObject({
      state: 'verified',
      source: 'computed',
      files: 1,
      compositeHash: compositeHash([{ filename: 'small.gguf', hash: truth }]),
    });
  });

  it('the deep check is a real 1-token chat the real server answers; a warmup greeting that never stops is refused, saying why', async () => {
    // The first health check of an endpoint runs the deep check (the default DeepHealthCheckEvery).
    await eventually(async () => (await endpointOf('small', w.a.url))?.deepCheck?.ok === true, 'the 1-token chat answered', 10_000);
    // These random weights never stop: every answer runs to max_tokens (the folder's README), so the greeting's
    // 64 tokens run out on visible text — the warmup refuses the model, as the Go node's validation does.
    const res = await fetch(`${w.hubUrl}/dev/warmup`, {
      method: 'POST',
      body: JSON.stringify({ model_id: 'small', warmup_type: 'inference' }),
      signal: AbortSignal.timeout(20_000),
    });
    const warm = (await res.json()) as Record<string, unknown>;
    expect(warm).toMatchObject({ model_id: 'small', success: false, error: expect.stringContaining('did not end within 64 tokens') });
  });

  it('dev hub: the plain openai loop works without include_usage; usage comes when asked; the model is the asked id', async () => {
    const client = hubClient();
    const plain = await client.chat.completions.create({ model: 'small', messages: MSG, stream: true, max_tokens: 12 });
    let text = '';
    const models = new Set<string>();
    let chunks = 0;
    for await (const chunk of plain) {
      text += chunk.choices[0]!.delta.content ?? ''; // the loop users write: crashes on a choices: [] chunk
      models.add(chunk.model);
      chunks++;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(chunks).toBeGreaterThan(2);
    expect([...models]).toEqual(['small']);
    // The agent still forwarded the engine's usage to the hub, which billed from it.
    await eventually(async () => /small: ok, \d+ in \/ 12 out/.test(w.hub.err), 'hub logged engine-reported tokens');

    const withUsage = await client.chat.completions.create({
      model: 'small',
      messages: MSG,
      stream: true,
      max_tokens: 12,
      stream_options: { include_usage: true },
    });
    const all: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of withUsage) all.push(chunk);
    expect(all.at(-1)!.choices).toEqual([]);
    expect(all.at(-1)!.usage).toMatchObject({ completion_tokens: 12 });
    expect(all.every((c) => c.model === 'small')).toBe(true);

    const once = await client.chat.completions.create({ model: 'small', messages: MSG, max_tokens: 5 });
    expect(once.model).toBe('small');
    expect(once.usage?.completion_tokens).toBe(5);
  });

  it('gateway: llama timings reach the client with and without usage; no usage chunk unless asked', async () => {
    const client = gatewayClient('timings');
    const plain = await client.chat.completions.create({ model: 'small', messages: MSG, stream: true, max_tokens: 8 });
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk & { timings?: { predicted_n?: number } }> = [];
    for await (const chunk of plain) {
      void chunk.choices[0]!.delta;
      chunks.push(chunk);
    }
    const finish = chunks.find((c) => c.choices[0]?.finish_reason);
    expect(finish?.choices[0]?.finish_reason).toBe('length');
    expect(finish?.timings?.predicted_n).toBe(8);
    expect(chunks.some((c) => c.usage)).toBe(false);
    expect(chunks.every((c) => c.model === 'small')).toBe(true);

    const usage = await client.chat.completions.create({ model: 'small', messages: MSG, stream: true, max_tokens: 8, stream_options: { include_usage: true } });
    const last: Array<OpenAI.Chat.Completions.ChatCompletionChunk & { timings?: { predicted_n?: number } }> = [];
    for await (const chunk of usage) last.push(chunk);
    expect(last.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 8 }, timings: { predicted_n: 8 } });

    const once = (await client.chat.completions.create({ model: 'small', messages: MSG, max_tokens: 4 })) as OpenAI.Chat.Completions.ChatCompletion & {
      timings?: { predicted_n?: number };
    };
    expect(once.timings?.predicted_n).toBe(4);
    expect(once.model).toBe('small');
  });

  it('capacity comes from /props total_slots: 8 streams on 2 slots all finish with a 1 s headers timeout (-np 2)', async () => {
    expect(await endpointOf('small', w.a.url)).toMatchObject({ maxConcurrent: 2, capacitySource: 'llama.cpp /props total_slots' });
    const client = hubClient();
    // Size the answers to this machine: each about 0.5 s alone, so the last of 4 waves waits over 1.5 s for a slot.
    const t = Date.now();
    await client.chat.completions.create({ model: 'small', messages: MSG, max_tokens: 64 });
    const perToken = (Date.now() - t) / 64;
    const maxTokens = Math.max(24, Math.min(200, Math.round(500 / perToken)));
    const t0 = Date.now();
    const runs = Array.from({ length: 8 }, async () => {
      const s = await client.chat.completions.create({
        model: 'small',
        messages: MSG,
        stream: true,
        max_tokens: maxTokens,
        stream_options: { include_usage: true },
      });
      let first = 0;
      let usage: number | undefined;
      let finish: string | null | undefined;
      for await (const c of s) {
        if (!first && c.choices[0]?.delta.content) first = Date.now() - t0;
        finish = c.choices[0]?.finish_reason ?? finish;
        usage = c.usage?.completion_tokens ?? usage;
      }
      return { first, usage, finish };
    });
    const results = await Promise.all(runs);
    expect(results.map((r) => [r.usage, r.finish])).toEqual(Array.from({ length: 8 }, () => [maxTokens, 'length']));
    // Some waited for a slot longer than the engine headers timeout: in the agent's queue, not inside llama-server.
    expect(Math.max(...results.map((r) => r.first))).toBeGreaterThan(1000);
    const slots = JSON.parse((await get(`${w.a.url}/slots`)).body) as unknown[];
    expect(slots).toHaveLength(2);
  }, 60_000);

  it('a cancelled stream is recorded with the tokens it delivered, marked estimated', async () => {
    const client = hubClient();
    const s = await client.chat.completions.create({ model: 'small', messages: MSG, stream: true, max_tokens: 400 });
    let got = 0;
    for await (const c of s) {
      if (c.choices[0]?.delta.content) got++;
      if (got === 30) break; // leaving the loop aborts the request, as an impatient client does
    }
    const row = await eventually(
      async () => (await w.bridge.invoke<RequestView[]>('requests.list', { limit: 5 })).find((r) => r.source === 'hub' && r.status === 'cancelled'),
      'the cancelled request recorded',
    );
    expect(row.tokensOut).toBeGreaterThanOrEqual(30);
    expect(row.tokensOut).toBeLessThan(400);
    expect(row.estimated).toBe(true);
    await eventually(
      async () => (JSON.parse((await get(`${w.a.url}/slots`)).body) as Array<{ is_processing: boolean }>).every((x) => !x.is_processing),
      'slots freed',
      3000,
    );
  });

  it('a wrong engine key shows as "engine refuses our key"; clients get 502, never an auth error (--api-key, --alias)', async () => {
    const ep = await eventually(async () => {
      const e = await endpointOf('keyed', w.b.url);
      return e?.condition === 'key_rejected' ? e : undefined;
    }, 'keyed endpoint marked key_rejected');
    expect(ep.lastError).toMatch(/^engine refuses our key/);
    expect(await hubHealth('keyed')).toBe('unhealthy');
    const err = await gatewayClient('key')
      .chat.completions.create({ model: 'keyed', messages: MSG, max_tokens: 4 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((err as InstanceType<typeof OpenAI.APIError>).message).toContain("engine rejected the provider's key");
    const doctor = await runCli(['doctor', '--home', w.home, '--config', path.join(w.home, 'config.toml')]);
    expect(doctor.out).toMatch(/engine for keyed .*engine refuses our key/);
    expect(doctor.code).toBe(1);
  });

  it('models.json edits apply live; a bad edit is refused with file:line and the old map kept (-np 1)', async () => {
    writeModels(keyedModels(ENGINE_KEY));
    const ep = await eventually(
      async () => {
        const e = await endpointOf('keyed', w.b.url);
        return e?.health === 'healthy' && !e.condition ? e : undefined;
      },
      'keyed healthy with the right key',
      5000,
    );
    expect(ep).toMatchObject({ maxConcurrent: 1, capacitySource: 'llama.cpp /props total_slots' });
    await eventually(async () => (await hubHealth('keyed')) === 'healthy', 'hub sees keyed healthy');
    const r = await hubClient().chat.completions.create({ model: 'keyed', messages: MSG, max_tokens: 3 });
    expect(r.model).toBe('keyed'); // not llama's alias "my-model"

    writeModels({}, '{\n  "keyed": {\n    "endpoint": \n}\n');
    await eventually(async () => /models\.json change refused: .*models\.json:\d+/.test(w.agent.err), 'the refusal logged with file:line');
    expect((await hubClient().chat.completions.create({ model: 'keyed', messages: MSG, max_tokens: 2 })).model).toBe('keyed');
    writeModels(keyedModels(ENGINE_KEY));
  });

  it('an engine that restarts with another key: the first hub request gets 502, the endpoint is out at once', async () => {
    await w.b.kill();
    const b2 = new Llama(w.b.port, ['--api-key', 'a-new-key', '--alias', 'my-model', '-np', '1']);
    w.cleanup.push(() => b2.kill());
    await b2.start();
    const res = await fetch(`${w.hubUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'keyed', messages: MSG, max_tokens: 2 }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as { error: { message: string; type?: string } };
    expect(body.error.message).toContain("engine rejected the provider's key");
    expect(body.error.type).not.toBe('authentication_error');
    await eventually(async () => (await hubHealth('keyed')) === 'unhealthy', 'keyed unhealthy at the hub', 2000);
  });

  it('an engine killed mid-stream: the delivered tokens are recorded, it is down at once, back within ~2 s of restarting', async () => {
    const client = gatewayClient('kill');
    const s = await client.chat.completions.create({ model: 'small', messages: MSG, stream: true, max_tokens: 450 });
    let got = 0;
    let failed: unknown;
    try {
      for await (const c of s) {
        if (c.choices[0]?.delta.content) got++;
        if (got === 40) await w.a.kill();
      }
    } catch (e) {
      failed = e;
    }
    expect(failed).toBeDefined(); // the client learns that the answer broke off
    const row = await eventually(
      async () => (await w.bridge.invoke<RequestView[]>('requests.list', { limit: 5 })).find((r) => r.source === 'local' && r.status === 'error'),
      'the broken request recorded',
    );
    expect(row.tokensOut).toBe(got);
    expect(row.estimated).toBe(true);
    const downAt = Date.now();
    await eventually(async () => (await hubHealth('small')) === 'unhealthy', 'small unhealthy at the hub', 2000);
    expect(Date.now() - downAt).toBeLessThan(2000);
    expect((await endpointOf('small', w.a.url))?.condition).toBe('down');

    await w.a.start();
    const upAt = Date.now();
    await eventually(async () => (await hubHealth('small')) === (await answeringHealth('small')), 'small answering again at the hub', 6000);
    expect((await endpointOf('small', w.a.url))?.condition).toBeUndefined();
    expect(Date.now() - upAt).toBeLessThan(4500);
    const r = await hubClient().chat.completions.create({ model: 'small', messages: MSG, max_tokens: 3 });
    expect(r.usage?.completion_tokens).toBe(3);
  });

  it('failover: with a second endpoint for the model, requests go there when the first dies (-np 4)', async () => {
    const c = new Llama(await freePort(), ['-np', '4']);
    w.cleanup.push(() => c.kill());
    await c.start();
    writeModels(keyedModels(ENGINE_KEY, { small: { endpoint: c.url }, four: { endpoint: c.url } }));
    const four = await eventually(
      async () => {
        const e = await endpointOf('four', c.url);
        return e?.capacitySource ? e : undefined;
      },
      'four with its capacity',
      5000,
    );
    expect(four.maxConcurrent).toBe(4);
    await eventually(async () => ((await snapshot()).models.find((m) => m.id === 'small')?.endpoints.length ?? 0) === 2, 'small on two endpoints');
    await w.a.kill();
    const client = gatewayClient('failover');
    for (let i = 0; i < 3; i++) {
      const r = await client.chat.completions.create({ model: 'small', messages: MSG, max_tokens: 3 });
      expect(r.usage?.completion_tokens).toBe(3);
    }
    expect((await endpointOf('small', w.a.url))?.condition).toBe('down');
    expect(await hubHealth('small')).toBe(await answeringHealth('small'));
  });

  it('a loading llama-server is "loading" (503 Loading model), not "not an engine", and healthy once loaded', async () => {
    // A large context makes the real server sit in its load phase (503 on every route) for a second or more.
    const l = new Llama(await freePort(), ['-m', SMALL, '-np', '1', '-c', '32768']);
    w.cleanup.push(() => l.kill());
    await l.start(false);
    await eventually(async () => (await get(`${l.url}/health`)).status === 503, 'llama-server loading', 5000);
    const [engines] = await Promise.all([
      w.bridge.invoke<AgentSnapshot['engines']>('engines.addEndpoint', { url: l.url }),
      Promise.resolve(writeModels(keyedModels(ENGINE_KEY, { loader: { endpoint: l.url } }))),
    ]);
    const found = engines.find((e) => e.url === l.url);
    expect(found).toMatchObject({ loading: true, type: 'llamacpp' });
    expect(found?.error).not.toMatch(/not an inference engine/);
    await eventually(async () => (await endpointOf('loader', l.url))?.condition === 'loading', 'loader shown as loading', 3000);
    await l.ready();
    await eventually(async () => (await endpointOf('loader', l.url))?.health === 'healthy', 'loader healthy once loaded', 6000);
    const r = await hubClient().chat.completions.create({ model: 'loader', messages: MSG, max_tokens: 2 });
    expect(r.model).toBe('loader');
  });
});
