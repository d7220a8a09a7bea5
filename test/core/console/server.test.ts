// The browser console server over real HTTP and a real WebSocket. The agent side is the typed
// BridgeBackend stand-in of test/support (a peer of the transport, not a mock of our code).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { BridgeBackend } from '../../../src/shared/bridge/transport';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import { startConsoleServer, type ConsoleServer } from '../../../src/core/console/server';
import { StandInBackend } from '../../support/bridge-backend';
import { BridgeError } from '../../../src/shared/bridge-error';
import { get, type Res } from '../../support/console/http';
import { pageProtocols, signIn } from '../../support/console/page-session';

const RESUMED = { paused: false, since: 1_700_000_000_000 };

function testBackend(): StandInBackend {
  const backend: StandInBackend = new StandInBackend({
    'serving.pause': ({ reason }) => ({ paused: true, cause: 'manual', reason }),
    'serving.resume': () => RESUMED,
    'logs.bundle': () => {
      throw new BridgeError('unavailable', 'The log folder is not readable: check its permissions.');
    },
    'requests.text': () => {
      // The agent emits a delta, then reads the text (which includes it).
      backend.emit({ type: 'request.text', id: 'r1', delta: 'xx' });
      return 'x'.repeat(10);
    },
  });
  return backend;
}

function cookieOf(res: Res): string {
  const set = res.headers['set-cookie']?.[0];
  if (!set) throw new Error('no cookie set');
  return set.split(';')[0]!;
}

function openSocket(url: string, headers: Record<string, string> = {}, protocols: string[] = []): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

type Msg = { id?: unknown; reply?: { ok: boolean; value?: unknown; error?: string; code?: string }; events?: BridgeEvent[] };

/** Messages of a socket, awaited one by one. */
function inbox(ws: WebSocket) {
  const queue: Msg[] = [];
  const waiters: ((m: Msg) => void)[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(String(d)) as Msg;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  return {
    next(): Promise<Msg> {
      const m = queue.shift();
      return m ? Promise.resolve(m) : new Promise((r) => waiters.push(r));
    },
  };
}

let staticDir: string;
beforeAll(() => {
  staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-console-'));
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Swan</title><script type="module" src="./assets/app.js"></script>');
  fs.mkdirSync(path.join(staticDir, 'assets'));
  fs.writeFileSync(path.join(staticDir, 'assets', 'app.js'), 'console.log(1)');
  fs.writeFileSync(path.join(path.dirname(staticDir), 'swan-secret.txt'), 'secret');
});
afterAll(() => {
  fs.rmSync(staticDir, { recursive: true, force: true });
  fs.rmSync(path.join(path.dirname(staticDir), 'swan-secret.txt'), { force: true });
});

let server: ConsoleServer | undefined;
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.terminate();
  await server?.close();
  server = undefined;
});

async function start(backend: BridgeBackend, extra: Partial<Parameters<typeof startConsoleServer>[0]> = {}) {
  server = await startConsoleServer({ backend, port: 0, staticDir, batchMs: 50, ...extra });
  return server;
}

describe('console HTTP', () => {
  it('prints a loopback URL (a one-time link, see session.test.ts) and has a long random token', async () => {
    const s = await start(testBackend());
    expect(s.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/\\?code=`));
    expect(s.token.length).toBeGreaterThanOrEqual(32);
    const other = await startConsoleServer({ backend: testBackend(), port: 0, staticDir });
    expect(other.token).not.toBe(s.token);
    await other.close();
  });

  it('refuses every request without the token', async () => {
    const s = await start(testBackend());
    for (const p of ['/', '/index.html', '/assets/app.js', '/metrics', '/session']) {
      const r = await get(s.port, p);
      expect(r.status, p).toBe(401);
      expect(r.body).toMatch(/Access token/);
    }
    expect((await get(s.port, '/?token=wrong')).status).toBe(401);
  });

  it('trades the token for an HttpOnly SameSite=Strict cookie, drops it from the URL, then serves with a strict CSP', async () => {
    const s = await start(testBackend());
    const first = await get(s.port, `/?token=${s.token}`);
    expect(first.status).toBe(302);
    expect(first.headers.location?.split('#')[0]).toBe('/');
    const set = first.headers['set-cookie']?.[0] ?? '';
    expect(set).toMatch(/HttpOnly/);
    expect(set).toMatch(/SameSite=Strict/);
    const cookie = cookieOf(first);
    const page = await get(s.port, '/', { cookie });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${s.port}`);
    const js = await get(s.port, '/assets/app.js', { cookie });
    expect(js.status).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.body).toBe('console.log(1)');
  });

  it('does not serve files outside the static folder', async () => {
    const s = await start(testBackend());
    const auth = { authorization: `Bearer ${s.token}` };
    for (const p of ['/../swan-secret.txt', '/%2e%2e/swan-secret.txt', '/assets/../../swan-secret.txt', '/%2e%2e%2fswan-secret.txt']) {
      const r = await get(s.port, p, auth);
      expect(r.status, p).toBe(404);
      expect(r.body).not.toContain('secret');
    }
  });

  it('answers only for its own host name (DNS rebinding)', async () => {
    const s = await start(testBackend());
    const r = await get(s.port, `/?token=${s.token}`, { host: `evil.example:${s.port}` });
    expect(r.status).toBe(421);
    expect((await get(s.port, '/session', { host: `localhost:${s.port}`, authorization: `Bearer ${s.token}` })).status).toBe(204);
  });

  it('serves /metrics only when enabled, and only with the token', async () => {
    const off = await start(testBackend());
    expect((await get(off.port, '/metrics', { authorization: `Bearer ${off.token}` })).status).toBe(404);
    await off.close();
    const s = await start(testBackend(), { metrics: async () => '# TYPE swan_up gauge\nswan_up 1\n' });
    expect((await get(s.port, '/metrics')).status).toBe(401);
    const r = await get(s.port, '/metrics', { authorization: `Bearer ${s.token}` });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(r.body).toBe('# TYPE swan_up gauge\nswan_up 1\n');
    expect((await get(s.port, `/metrics?token=${s.token}`)).status).toBe(200);
  });

  it('answers 500 with a message when collecting metrics fails', async () => {
    const s = await start(testBackend(), {
      metrics: () => {
        throw new Error('boom');
      },
    });
    const r = await get(s.port, '/metrics', { authorization: `Bearer ${s.token}` });
    expect(r.status).toBe(500);
    expect(r.body).toMatch(/could not be collected/);
  });
});

describe('console WebSocket bridge', () => {
  const origin = (s: ConsoleServer) => `http://127.0.0.1:${s.port}`;
  const bridgeUrl = (s: ConsoleServer, withToken = true) => `ws://127.0.0.1:${s.port}/bridge${withToken ? `?token=${s.token}` : ''}`;

  it('refuses sockets without the token, from another origin, or with a cookie but no origin or no page secret', async () => {
    const s = await start(testBackend());
    await expect(openSocket(bridgeUrl(s, false), { origin: origin(s) })).rejects.toThrow('HTTP 401');
    await expect(openSocket(bridgeUrl(s), { origin: 'http://evil.example' })).rejects.toThrow('HTTP 403');
    await expect(openSocket(bridgeUrl(s), { origin: `http://localhost:${s.port + 1}` })).rejects.toThrow('HTTP 403');
    const page = await signIn(s.port, `/?token=${s.token}`);
    await expect(openSocket(bridgeUrl(s, false), { cookie: page.cookie }, pageProtocols(page))).rejects.toThrow('HTTP 403');
    // The cookie with the console's own Origin (what another local server holding the cookie can send) is not enough.
    await expect(openSocket(bridgeUrl(s, false), { cookie: page.cookie, origin: origin(s) })).rejects.toThrow('HTTP 401');
    await expect(openSocket(bridgeUrl(s, false), { cookie: page.cookie, origin: origin(s) }, ['swan-bridge', 'swan-page.not-the-secret'])).rejects.toThrow(
      'HTTP 401',
    );
  });

  it('accepts the page: cookie, page secret and same-host origin; invokes reach the backend with validated args', async () => {
    const backend = testBackend();
    const s = await start(backend);
    const page = await signIn(s.port, `/?token=${s.token}`);
    const ws = await openSocket(bridgeUrl(s, false), { cookie: page.cookie, origin: origin(s) }, pageProtocols(page));
    expect(ws.protocol).toBe('swan-bridge');
    sockets.push(ws);
    const box = inbox(ws);
    ws.send(JSON.stringify({ id: 1, channel: 'serving.pause', args: { reason: 'gaming' } }));
    expect(await box.next()).toEqual({ id: 1, reply: { ok: true, value: { paused: true, cause: 'manual', reason: 'gaming' } } });
    expect(backend.calls).toEqual([{ channel: 'serving.pause', args: { reason: 'gaming' } }]);
  });

  it('answers every malformed message with an error reply and keeps serving', async () => {
    const backend = testBackend();
    const s = await start(backend);
    const ws = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(ws);
    const box = inbox(ws);
    const cases: [string, unknown, string][] = [
      ['{not json', null, 'malformed'],
      [JSON.stringify([1, 2]), null, 'malformed'],
      [JSON.stringify({ id: 'a' }), 'a', 'malformed'],
      [JSON.stringify({ id: 'b', channel: 'fs.readFile', args: {} }), 'b', 'unknown_channel'],
      [JSON.stringify({ id: 'c', channel: 'constructor', args: {} }), 'c', 'unknown_channel'],
      [JSON.stringify({ id: 'd', channel: 'models.setEnabled', args: { model: 'm' } }), 'd', 'invalid_args'],
      [JSON.stringify({ id: 'e', channel: 'snapshot.get', args: { extra: 1 } }), 'e', 'invalid_args'],
      // The backend's own refusal, with its code.
      [JSON.stringify({ id: 'f', channel: 'logs.bundle', args: {} }), 'f', 'unavailable'],
    ];
    for (const [raw, id, code] of cases) {
      ws.send(raw);
      const m = await box.next();
      expect(m.id, raw).toBe(id);
      expect(m.reply, raw).toMatchObject({ ok: false, code, error: expect.any(String) });
    }
    ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await box.next()).reply).toMatchObject({ ok: false, code: 'malformed' });
    expect(backend.calls.map((c) => c.channel)).toEqual(['logs.bundle']);
    ws.send(JSON.stringify({ id: 'ok', channel: 'serving.resume', args: {} }));
    expect(await box.next()).toEqual({ id: 'ok', reply: { ok: true, value: RESUMED } });
  });

  it('closes a socket that sends more than 1 MB, and still serves others', async () => {
    const s = await start(testBackend());
    const big = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(big);
    const closed = new Promise<number>((r) => big.once('close', (code) => r(code)));
    big.send(JSON.stringify({ id: 1, channel: 'snapshot.get', args: { pad: 'x'.repeat(1024 * 1024) } }));
    expect(await closed).toBe(1009);
    const ws = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(ws);
    const box = inbox(ws);
    ws.send(JSON.stringify({ id: 2, channel: 'serving.resume', args: {} }));
    expect((await box.next()).reply).toEqual({ ok: true, value: RESUMED });
  });

  it('pushes events in batches, not one message per token, and stops listening when the last page leaves', async () => {
    const backend = testBackend();
    const s = await start(backend);
    expect(backend.subscribers).toBe(0);
    const ws = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(ws);
    const box = inbox(ws);
    expect(backend.subscribers).toBe(1);
    for (let i = 0; i < 300; i++) backend.emit({ type: 'request.text', id: 'r1', delta: 'tok ' });
    backend.emit({ type: 'log', entry: { ts: 1, level: 'info', subsystem: 'hub', msg: 'registered' } });
    const m = await box.next();
    expect(m.events).toEqual([
      { type: 'request.text', id: 'r1', delta: 'tok '.repeat(300) },
      { type: 'log', entry: { ts: 1, level: 'info', subsystem: 'hub', msg: 'registered' } },
    ]);
    const closed = new Promise<void>((r) => ws.once('close', () => r()));
    ws.close();
    await closed;
    await expect.poll(() => backend.subscribers, { timeout: 2000 }).toBe(0);
  });

  it('delivers the events emitted before a reply ahead of that reply (no overlap of fetched text and deltas)', async () => {
    const backend = testBackend();
    const s = await start(backend, { batchMs: 10_000 });
    const ws = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(ws);
    const box = inbox(ws);
    backend.emit({ type: 'request.text', id: 'r1', delta: 'x'.repeat(8) });
    ws.send(JSON.stringify({ id: 7, channel: 'requests.text', args: { id: 'r1' } }));
    expect(await box.next()).toEqual({ events: [{ type: 'request.text', id: 'r1', delta: 'x'.repeat(10) }] });
    expect(await box.next()).toEqual({ id: 7, reply: { ok: true, value: 'x'.repeat(10) } });
  });

  it('sends each batch to every open page', async () => {
    const backend = testBackend();
    const s = await start(backend);
    const a = await openSocket(bridgeUrl(s), { origin: origin(s) });
    const b = await openSocket(bridgeUrl(s), { origin: origin(s) });
    sockets.push(a, b);
    const boxA = inbox(a);
    const boxB = inbox(b);
    backend.emit({ type: 'request.text', id: 'r', delta: 'hi' });
    expect((await boxA.next()).events).toEqual([{ type: 'request.text', id: 'r', delta: 'hi' }]);
    expect((await boxB.next()).events).toEqual([{ type: 'request.text', id: 'r', delta: 'hi' }]);
  });

  it('close() ends open sockets and frees the port', async () => {
    const s = await start(testBackend());
    const ws = await openSocket(bridgeUrl(s), { origin: origin(s) });
    const closed = new Promise<void>((r) => ws.once('close', () => r()));
    await s.close();
    await closed;
    await expect(get(s.port, '/')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    server = undefined;
  });
});
