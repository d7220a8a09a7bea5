// Health checks and the degraded -> unhealthy -> healthy transitions against a real test engine.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { checkEndpoint, HealthMonitor, type HealthChange } from '../../../src/core/engine/health';
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
      res.writeHead(503, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":{"message":"Loading model","type":"unavailable_error","code":503}}');
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
    const s = http.createServer((_req, res) => void (failing ? res.writeHead(500).end('no') : res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}')));
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

describe('key check on an engine whose /v1/models is public', () => {
  it('proves the key with one 1-token request, once per key', async () => {
    const posts: string[] = [];
    const s = http.createServer((req, res) => {
      if (req.method === 'GET') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[{"id":"m","owned_by":"me"}]}');
      posts.push(String(req.headers.authorization));
      res.writeHead(req.headers.authorization === 'Bearer good' ? 200 : 401, { 'content-type': 'application/json' }).end('{}');
    });
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const bad = await checkEndpoint(url, 1000, 'bad', undefined, { verifyKey: true });
    expect(bad).toMatchObject({ ok: false, condition: 'key_rejected' });
    expect(bad.error).toContain('a 1-token POST /v1/chat/completions');
    expect(await checkEndpoint(url, 1000, 'good', undefined, { verifyKey: true })).toEqual({ ok: true, keyVerified: true });
    const m = new HealthMonitor({ intervalMs: 60_000, timeoutMs: 1000 });
    monitors.push(m);
    m.setEndpoints([{ url, apiKey: 'good' }]);
    await m.checkNow();
    await m.checkNow();
    expect(posts).toEqual(['Bearer bad', 'Bearer good', 'Bearer good']);
    s.closeAllConnections();
  });
});
