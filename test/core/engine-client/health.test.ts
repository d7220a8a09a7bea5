// Health checks and the degraded -> unhealthy -> healthy transitions against a real test engine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEndpoint, HealthMonitor, type HealthChange } from '../../../src/core/engine-client/health';
import { ModelRegistry } from '../../../src/core/models/registry';
import { healthProbe } from '../../../src/core/inference/health-probe';
import { InferenceRunner } from '../../../src/core/inference/runner';
import { AgentLog } from '../../../src/core/base/log';
import { RequestBook } from '../../../src/core/inference/requests';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

let engines: TestEngine[] = [];
let monitors: HealthMonitor[] = [];
let servers: http.Server[] = [];
afterEach(async () => {
  monitors.forEach((m) => m.stop());
  await Promise.all(engines.map((e) => e.close()));
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  engines = [];
  monitors = [];
  servers = [];
});

async function engine(opts?: Parameters<typeof startTestEngine>[0]): Promise<TestEngine> {
  const e = await startTestEngine(opts);
  engines.push(e);
  return e;
}

describe('checkEndpoint', () => {
  it('is ok on /v1/models, and names the failure otherwise', async () => {
    const e = await engine();
    expect(await checkEndpoint(`${e.url}/v1`)).toEqual({ ok: true });
    expect(e.requests.map((r) => r.path)).toEqual(['/v1/models']);
    await e.setMode('down');
    const r = await checkEndpoint(e.url, 500);
    expect(r.ok).toBe(false);
    expect(r.error).toBe(`the engine at ${e.url} refused the connection (not running?)`);
  });

  it('an engine that goes away during the probe (its connection reset, then the port closed) is down at once, not degraded', async () => {
    // The race behind a flaky "refused -> unhealthy at once" run: the engine stopped while a probe was in flight.
    const server = http.createServer((req) => {
      server.close();
      req.socket.destroy();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await checkEndpoint(url, 1000);
    expect(r).toMatchObject({ ok: false, condition: 'down' });
  });

  it('a key the engine refuses (401 on /v1/models) is "engine refuses our key", not a fallback to /health', async () => {
    const e = await engine({ apiKey: 'secret' });
    const r = await checkEndpoint(e.url);
    expect(r).toMatchObject({ ok: false, condition: 'key_rejected' });
    expect(r.error).toMatch(/^engine refuses our key: GET \/v1\/models at .* answered 401/);
    expect((await checkEndpoint(e.url, 1000, 'wrong')).condition).toBe('key_rejected');
    expect(await checkEndpoint(e.url, 1000, 'secret')).toEqual({ ok: true });
  });

  it('llama.cpp: /props with the key gives the slot count; 503 Loading model is "loading"', async () => {
    const e = await engine({ engineType: 'llamacpp' });
    expect(await checkEndpoint(e.url, 1000, undefined, 'llamacpp')).toEqual({ ok: true, capacity: { slots: 1, source: 'llama.cpp /props total_slots' } });
    const s = http.createServer((_req, res) => {
      res
        .writeHead(503, { 'content-type': 'application/json; charset=utf-8' })
        .end('{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const r = await checkEndpoint(`http://127.0.0.1:${(s.address() as AddressInfo).port}`, 500);
    expect(r.condition).toBe('loading');
    expect(r.ok).toBe(false);
  });

  it('fails with both answers named when neither route works, and on a timeout', async () => {
    const s = http.createServer((req, res) => {
      if (req.url === '/health') return; // never answers
      res.writeHead(500).end('no');
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const r = await checkEndpoint(url, 100);
    expect(r).toEqual({ ok: false, error: `the engine at ${url} is not answering: GET /v1/models answered 500; GET /health failed (no answer within 100 ms)` });
    s.closeAllConnections();
  });
});

describe('HealthMonitor', () => {
  it('healthy -> degraded -> unhealthy after 3 failures -> healthy, emitting only changes', async () => {
    let failing = false;
    const s = http.createServer(
      (_req, res) =>
        void (failing ? res.writeHead(500).end('no') : res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}')),
    );
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const m = new HealthMonitor({ intervalMs: 60_000, timeoutMs: 500 });
    monitors.push(m);
    const changes: HealthChange[] = [];
    m.on('change', (c: HealthChange) => changes.push(c));
    m.setEndpoints([url, `${url}/v1`, { url: `${url}/`, apiKey: undefined }]);
    expect(m.states()).toHaveLength(1);
    await m.checkNow();
    expect(changes).toEqual([]);
    expect(m.health(url)).toBe('healthy');

    failing = true;
    await m.checkNow();
    expect(changes.map((c) => c.health)).toEqual(['degraded']);
    expect(changes[0]?.error).toContain('answered 500');
    await m.checkNow();
    expect(changes.map((c) => c.health)).toEqual(['degraded']);
    expect(m.states()[0]?.consecutiveFailures).toBe(2);
    await m.checkNow();
    expect(changes.map((c) => c.health)).toEqual(['degraded', 'unhealthy']);
    await m.checkNow();
    expect(changes).toHaveLength(2);

    failing = false;
    await m.checkNow();
    expect(changes.at(-1)).toEqual({ url, health: 'healthy' });
    expect(m.health(`${url}/v1/`)).toBe('healthy');
    s.closeAllConnections();
  });

  it('a refused connection is unhealthy at once; probes back off from 1 s and bring it back', async () => {
    const e = await engine();
    const m = new HealthMonitor({ intervalMs: 60_000, timeoutMs: 500, retryMs: 50 });
    monitors.push(m);
    const changes: HealthChange[] = [];
    m.on('change', (c: HealthChange) => changes.push(c));
    m.setEndpoints([e.url]);
    m.start();
    await e.waitForRequests(1);
    await e.setMode('down');
    m.markDown(e.url, 'down', 'a request was refused');
    expect(changes).toEqual([{ url: e.url, health: 'unhealthy', condition: 'down', error: 'a request was refused' }]);
    await e.setMode('ok');
    await new Promise((r) => m.once('change', r));
    expect(changes.at(-1)).toEqual({ url: e.url, health: 'healthy' });
  });

  it('checks each unique endpoint once per round, on its interval', async () => {
    const a = await engine();
    const b = await engine();
    const m = new HealthMonitor({ intervalMs: 30, timeoutMs: 500 });
    monitors.push(m);
    m.setEndpoints([a.url, b.url, a.url]);
    m.start();
    await a.waitForRequests(3);
    await b.setMode('down');
    const [change] = (await once(m, 'change')) as [HealthChange];
    // Down is down at once, whether a probe was in flight when the port closed (reset, asked again) or not.
    expect(change).toMatchObject({ url: b.url, health: 'unhealthy', condition: 'down' });
    m.stop();
    await m.checkNow(); // joins the round that may still be under way
    const n = a.requests.length;
    await m.checkNow();
    expect(a.requests.length).toBe(n + 1);
  });

  it('probeNow asked while a check is under way answers with a check begun after the ask (the one under way may predate the fault)', async () => {
    // The engine answers a check, then stops; its answer arrives after the stop. A look asked for after the
    // stop must not be that answer: discovery asks health to look again when the two disagree.
    const s = http.createServer();
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const arrived = once(s, 'request') as Promise<[http.IncomingMessage, http.ServerResponse]>;
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const m = new HealthMonitor({ intervalMs: 60_000, timeoutMs: 2000 });
    monitors.push(m);
    m.setEndpoints([url]);
    const first = m.checkNow();
    const [, held] = await arrived;
    const closed = new Promise<void>((r) => s.close(() => r()));
    const looked = m.probeNow(url);
    held.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    await first;
    await looked;
    await closed;
    expect(m.states()[0]).toMatchObject({ health: 'unhealthy', condition: 'down' });
  });

  it('concurrent checkNow calls share one round; removed endpoints are forgotten', async () => {
    const a = await engine();
    const m = new HealthMonitor({ intervalMs: 60_000 });
    monitors.push(m);
    m.setEndpoints([a.url]);
    await Promise.all([m.checkNow(), m.checkNow(), m.checkNow()]);
    expect(a.requests).toHaveLength(1);
    m.setEndpoints([]);
    expect(m.health(a.url)).toBeUndefined();
  });
});

/** A runner whose only purpose here is the probe: the real engine-call service, no scheduler. */
function probeOf(timeoutMs = 2000) {
  const runner = new InferenceRunner({
    registry: new ModelRegistry(),
    admit: () => Promise.reject(new Error('no admission here')),
    book: new RequestBook(),
    log: new AgentLog({ console: false }).child('t'),
  });
  return healthProbe(runner, timeoutMs);
}

/** An engine stand-in: a live /v1/models (as a dead vLLM behind FastAPI keeps serving), completions as the test says. */
async function backend(
  completions: (req: http.IncomingMessage, res: http.ServerResponse, body: Record<string, unknown>) => void,
): Promise<{ url: string; asked: Array<Record<string, unknown>> }> {
  const asked: Array<Record<string, unknown>> = [];
  const s = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/v1/models')
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"object":"list","data":[{"id":"m","owned_by":"vllm","max_model_len":4096}]}');
      const body = JSON.parse(text || '{}') as Record<string, unknown>;
      asked.push({ ...body, authorization: req.headers.authorization });
      completions(req, res, body);
    });
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, asked };
}

const ok = (res: http.ServerResponse) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[{"message":{"content":"p"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}');
const fail = (status: number, body: string) => (_q: http.IncomingMessage, res: http.ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);

function monitor(opts: Partial<ConstructorParameters<typeof HealthMonitor>[0]> = {}): HealthMonitor {
  const m = new HealthMonitor({ intervalMs: 60_000, timeoutMs: 1000, probe: probeOf(), deepEvery: 1, ...opts });
  monitors.push(m);
  return m;
}

describe('deep health check (a real 1-token chat, Go model_health_deepcheck_test.go)', () => {
  it('a dead engine behind a live model list (EngineDeadError 500) is unhealthy, engine_error, and asked again until it answers', async () => {
    let dead = true;
    const b = await backend((q, res) => (dead ? fail(500, '{"error":"EngineDeadError"}')(q, res) : ok(res)));
    const m = monitor();
    m.setEndpoints([{ url: b.url, models: [{ name: 'm', chat: true }] }]);
    const deep: unknown[] = [];
    m.on('deep', (d) => deep.push(d));
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({ health: 'unhealthy', condition: 'engine_error', lastError: expect.stringContaining('EngineDeadError') });
    expect(deep).toEqual([{ url: b.url, state: expect.objectContaining({ model: 'm', ok: false, code: 'engine_error' }) }]);
    expect(b.asked[0]).toMatchObject({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });
    dead = false;
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({ health: 'healthy' });
    expect(m.states()[0]!.condition).toBeUndefined();
    expect(b.asked).toHaveLength(2);
  });

  it('each failure is told apart by a stable code: no response, rejected credentials, not served here, engine error; 400/422/429 do not count', async () => {
    const cases: Array<[number, string, string | undefined]> = [
      [503, '{"error":"auth_unavailable: no auth available"}', 'engine_error'],
      [401, '{"error":"unauthorized"}', 'key_rejected'],
      [400, '{"error":"template rejected the prompt"}', undefined],
      [422, '{"detail":"unprocessable"}', undefined],
      [429, '{"error":"busy"}', undefined],
    ];
    for (const [status, body, code] of cases) {
      const b = await backend(fail(status, body));
      const m = monitor();
      m.setEndpoints([{ url: b.url, models: [{ name: 'm', chat: true }] }]);
      await m.checkNow();
      expect(m.states()[0]?.condition, `HTTP ${status}`).toBe(code);
      expect(m.states()[0]?.health, `HTTP ${status}`).toBe(code ? 'unhealthy' : 'healthy');
    }
    // 404 is the model's failure (not served at this endpoint), not the engine's.
    const nf = await backend(fail(404, '{"error":{"message":"The model `m` does not exist."}}'));
    const m404 = monitor();
    m404.setEndpoints([{ url: nf.url, models: [{ name: 'm', chat: true }] }]);
    await m404.checkNow();
    expect(m404.states()[0]).toMatchObject({ health: 'healthy' });
    expect(m404.deepStates(nf.url)).toEqual([expect.objectContaining({ model: 'm', ok: false, code: 'not_served' })]);
    // No response at all: a completion that never answers within the deep check's time.
    const hang = await backend(() => undefined);
    const mh = monitor({ probe: probeOf(300) });
    mh.setEndpoints([{ url: hang.url, models: [{ name: 'm', chat: true }] }]);
    await mh.checkNow();
    expect(mh.states()[0]).toMatchObject({ health: 'unhealthy', condition: 'no_response' });
  });

  it("embedding, image and audio models are never probed with chat; the engine's own model name is used", async () => {
    const b = await backend((_q, res) => ok(res));
    const m = monitor();
    m.setEndpoints([
      {
        url: b.url,
        models: [
          { name: 'nomic-embed', chat: false },
          { name: 'qwen2.5:7b', chat: true },
        ],
      },
    ]);
    await m.checkNow();
    expect(b.asked.map((a) => a.model)).toEqual(['qwen2.5:7b']);
    const e = await backend(() => {
      throw new Error('an embedding model must not be probed with a chat completion');
    });
    const me = monitor();
    me.setEndpoints([{ url: e.url, models: [{ name: 'nomic-embed', chat: false }] }]);
    await me.checkNow();
    expect(e.asked).toEqual([]);
    expect(me.states()[0]).toMatchObject({ health: 'healthy' });
  });

  it('the first check and every Nth after (DeepHealthCheckEvery); 0 = off', async () => {
    const b = await backend((_q, res) => ok(res));
    const m = monitor({ deepEvery: 5 });
    m.setEndpoints([{ url: b.url, models: [{ name: 'm', chat: true }] }]);
    for (let i = 0; i < 10; i++) await m.checkNow();
    expect(b.asked).toHaveLength(2); // checks 1 and 6
    const off = await backend((_q, res) => ok(res));
    const m0 = monitor({ deepEvery: 0 });
    m0.setEndpoints([{ url: off.url, models: [{ name: 'm', chat: true }] }]);
    for (let i = 0; i < 5; i++) await m0.checkNow();
    expect(off.asked).toEqual([]);
  });

  it('each chat model of one endpoint gets its own deep check on its first check and every Nth after, one at a time', async () => {
    const b = await backend((_q, res) => ok(res));
    const m = monitor({ deepEvery: 3 });
    m.setEndpoints([
      {
        url: b.url,
        models: [
          { name: 'b', chat: true },
          { name: 'a', chat: true },
        ],
      },
    ]);
    for (let i = 0; i < 4; i++) await m.checkNow();
    // Checks 1 and 4 ask both models (never at once: each probe ends before the next starts).
    expect(b.asked.map((a) => a.model)).toEqual(['a', 'b', 'a', 'b']);
    // A model added later is asked on its own first check, not when its neighbours' turn comes.
    m.setEndpoints([
      {
        url: b.url,
        models: [
          { name: 'b', chat: true },
          { name: 'a', chat: true },
          { name: 'c', chat: true },
        ],
      },
    ]);
    await m.checkNow();
    expect(b.asked.map((a) => a.model)).toEqual(['a', 'b', 'a', 'b', 'c']);
  });

  it('a model that fails every completion beside a working one on the same engine is unhealthy on its own; the engine and its neighbour stay healthy', async () => {
    const b = await backend((q, res, body) => (body.model === 'lora-broken' ? fail(500, '{"error":"adapter failed to load"}')(q, res) : ok(res)));
    const m = monitor({ deepEvery: 10 });
    m.setEndpoints([
      {
        url: b.url,
        models: [
          { name: 'base', chat: true },
          { name: 'lora-broken', chat: true },
        ],
      },
    ]);
    const changes: unknown[] = [];
    m.on('change', (c) => changes.push(c));
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({ health: 'healthy' });
    expect(m.states()[0]!.condition).toBeUndefined();
    expect(changes).toEqual([]);
    const deep = Object.fromEntries(m.deepStates(b.url).map((d) => [d.model, d]));
    expect(deep.base).toMatchObject({ ok: true });
    expect(deep['lora-broken']).toMatchObject({ ok: false, code: 'engine_error' });
    // The failing model is asked on every check until it passes; the working one keeps its cadence.
    await m.checkNow();
    expect(b.asked.map((a) => a.model)).toEqual(['base', 'lora-broken', 'lora-broken']);
  });

  it("when every chat model of an endpoint fails for the engine's sake, the endpoint itself is unhealthy with that condition", async () => {
    const b = await backend(fail(500, '{"error":"EngineDeadError"}'));
    const m = monitor();
    m.setEndpoints([
      {
        url: b.url,
        models: [
          { name: 'a', chat: true },
          { name: 'b', chat: true },
          { name: 'embed', chat: false },
        ],
      },
    ]);
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({ health: 'unhealthy', condition: 'engine_error' });
  });
});

describe('key check on an engine whose /v1/models is public', () => {
  it('proves a new key with one 1-token chat (the deep check, even when off), once per key', async () => {
    const b = await backend((req, res) => (req.headers.authorization === 'Bearer good' ? ok(res) : fail(401, '{}')(req, res)));
    const bad = await checkEndpoint(b.url, 1000, 'bad', undefined, { verifyKey: true });
    expect(bad).toEqual({ ok: true, keyUnproven: true });
    const m = monitor({ deepEvery: 0 });
    m.setEndpoints([{ url: b.url, apiKey: 'bad', models: [{ name: 'm', chat: true }] }]);
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({
      health: 'unhealthy',
      condition: 'key_rejected',
      lastError: expect.stringMatching(/^engine refuses our key: a 1-token chat/),
    });
    m.setEndpoints([{ url: b.url, apiKey: 'good', models: [{ name: 'm', chat: true }] }]);
    await m.checkNow();
    await m.checkNow();
    expect(m.states()[0]).toMatchObject({ health: 'healthy' });
    expect(b.asked.map((a) => a.authorization)).toEqual(['Bearer bad', 'Bearer good']);
  });
});
