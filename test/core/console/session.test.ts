// The console's credentials: the printed link carries a one-time code, not the
// token; the cookie holds a session id that is not the token and works only as that cookie; cookies are
// named by port; a stable token still works as a bookmark (exchanged again each time) and for /metrics;
// the Host check holds on every bind, and a LAN bind carries a warning.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { allowedHosts, ConsoleAuth, CODE_TTL_MS, cookieName, exposureWarning, SESSION_IDLE_MS, SESSION_MAX_MS } from '../../../src/core/console/auth';
import type { ConsoleSessionView } from '../../../src/shared/views/settings';
import { startConsoleServer, type ConsoleServer } from '../../../src/core/console/server';
import { StandInBackend } from '../../support/bridge-backend';
import { get, type Res } from '../../support/console/http';
import { pageFromLocation, pageProtocols, post, signIn, type PageSession } from '../../support/console/page-session';

const backend = new StandInBackend();

function cookieOf(res: Res): { name: string; value: string; header: string } {
  const set = res.headers['set-cookie']?.[0];
  if (!set) throw new Error(`no cookie set (status ${res.status})`);
  const pair = set.split(';')[0]!;
  const eq = pair.indexOf('=');
  return { name: pair.slice(0, eq), value: pair.slice(eq + 1), header: pair };
}

function socketStatus(url: string, headers: Record<string, string>, protocols: string[] = []): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
}

let staticDir: string;
beforeAll(() => {
  staticDir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-console-session-'));
  fs.writeFileSync(path.join(staticDir, 'index.html'), '<!doctype html><title>Swan</title>');
});
afterAll(() => fs.rmSync(staticDir, { recursive: true, force: true }));

const servers: ConsoleServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});
async function start(extra: Partial<Parameters<typeof startConsoleServer>[0]> = {}): Promise<ConsoleServer> {
  const s = await startConsoleServer({ backend, port: 0, staticDir, metrics: () => 'swan_up 1\n', ...extra });
  servers.push(s);
  return s;
}
const codePath = (url: string) => new URL(url).pathname + new URL(url).search;

describe('console one-time links and sessions', () => {
  it('the printed link holds a one-time code, not the token; the code works once', async () => {
    const s = await start();
    expect(s.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/\\?code=[A-Za-z0-9_-]{20,}$`));
    expect(s.url).not.toContain(s.token);
    const first = await get(s.port, codePath(s.url));
    expect(first.status).toBe(302);
    expect(first.headers.location).toMatch(/^\/#swan-page=[A-Za-z0-9_-]{40,}$/);
    const c = cookieOf(first);
    expect((await get(s.port, '/', { cookie: c.header })).status).toBe(200);
    // The same link again (from history, a scrollback or a journal) opens nothing.
    const again = await get(s.port, codePath(s.url));
    expect(again.status).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();
    // Each new link is a new code.
    const other = s.newUrl();
    expect(other).not.toBe(s.url);
    expect((await get(s.port, codePath(other))).status).toBe(302);
  });

  it('the cookie is a session id named by port: not the token, and useless as ?token= or Bearer', async () => {
    const s = await start();
    const exchange = await get(s.port, codePath(s.url));
    const c = cookieOf(exchange);
    expect(c.name).toBe(`swan_session_${s.port}`);
    expect(c.name).toBe(cookieName(s.port));
    expect(c.value).not.toBe(s.token);
    expect(c.value.length).toBeGreaterThanOrEqual(40);
    expect((await get(s.port, `/?token=${c.value}`)).status).toBe(401);
    expect((await get(s.port, '/metrics', { authorization: `Bearer ${c.value}` })).status).toBe(401);
    expect((await get(s.port, `/metrics?token=${c.value}`)).status).toBe(401);
    expect(await socketStatus(`ws://127.0.0.1:${s.port}/bridge?token=${c.value}`, {})).toBe(401);
    // Under another port's name the same value is not accepted.
    expect((await get(s.port, '/', { cookie: `swan_session_${s.port + 1}=${c.value}` })).status).toBe(401);
    // As this console's cookie from this console's Origin, but without the page secret: nothing.
    expect(await socketStatus(`ws://127.0.0.1:${s.port}/bridge`, { cookie: c.header, origin: `http://127.0.0.1:${s.port}` })).toBe(401);
    expect((await get(s.port, '/metrics', { cookie: c.header })).status).toBe(401);
    // With the page secret its page read from the redirect's fragment, it opens the bridge.
    const page = pageFromLocation(exchange.headers.location)!;
    expect(
      await socketStatus(`ws://127.0.0.1:${s.port}/bridge`, { cookie: c.header, origin: `http://127.0.0.1:${s.port}` }, ['swan-bridge', `swan-page.${page}`]),
    ).toBe(101);
    // A code opens pages, never the bridge directly.
    expect(
      await socketStatus(`ws://127.0.0.1:${s.port}/bridge?code=${new URL(s.newUrl()).searchParams.get('code')}`, { origin: `http://127.0.0.1:${s.port}` }),
    ).toBe(401);
  });

  it('a stable token works as a bookmark again and again, and for /metrics, without leaving a cookie for /metrics', async () => {
    const token = 'stable-token-from-a-file-0123456789abcdef';
    const s = await start({ token });
    const a = await get(s.port, `/?token=${token}`);
    const b = await get(s.port, `/?token=${token}`);
    expect(a.status).toBe(302);
    expect(b.status).toBe(302);
    expect(a.headers.location).toMatch(/^\/#swan-page=/);
    expect(pageFromLocation(a.headers.location)).not.toBe(pageFromLocation(b.headers.location));
    expect(cookieOf(a).value).not.toBe(cookieOf(b).value);
    expect(cookieOf(a).value).not.toBe(token);
    const m = await get(s.port, `/metrics?token=${token}`);
    expect(m.status).toBe(200);
    expect(m.headers['set-cookie']).toBeUndefined();
    expect((await get(s.port, '/metrics', { authorization: `Bearer ${token}` })).body).toBe('swan_up 1\n');
  });

  it('sessions end with the agent: a restarted console on the same port refuses the old cookie', async () => {
    const token = 'same-token-across-restarts-0123456789';
    const s = await start({ token });
    const c = cookieOf(await get(s.port, codePath(s.url)));
    const port = s.port;
    await s.close();
    servers.splice(0);
    const again = await start({ token, port });
    expect((await get(again.port, '/', { cookie: c.header })).status).toBe(401);
  });

  it('the redirect after a code normalises the path before it checks it: no way to another host', async () => {
    const s = await start();
    for (const target of ['/.//evil.example/x', '/./\\evil.example/x', '/%2e//evil.example/x', '/a/..//evil.example/x']) {
      const code = new URL(s.newUrl()).searchParams.get('code');
      const r = await get(s.port, `${target}?code=${code}`);
      expect(r.status, target).toBe(400);
      expect(r.headers.location, target).toBeUndefined();
    }
    // An ordinary path keeps its query and stays on this console.
    const ok = await get(s.port, `/a/b?x=1&code=${new URL(s.newUrl()).searchParams.get('code')}`);
    expect(ok.status).toBe(302);
    expect(ok.headers.location?.split('#')[0]).toBe('/a/b?x=1');
  });

  it('codes expire unused after CODE_TTL_MS', () => {
    let now = 1_000_000;
    const auth = new ConsoleAuth(
      't'.repeat(32),
      () => 1,
      () => now,
    );
    const code = auth.newCode();
    now += CODE_TTL_MS + 1;
    const req = { headers: {} } as http.IncomingMessage;
    expect(auth.check(req, new URL(`http://x/?code=${code}`), { acceptCode: true })).toBeNull();
  });
});

describe('Host check and LAN warning on every bind', () => {
  it('a loopback console answers to loopback names only', () => {
    const a = allowedHosts('127.0.0.1', 7777);
    expect([...a].sort()).toEqual(['127.0.0.1:7777', '[::1]:7777', 'localhost:7777']);
  });

  it('bound to every interface, it still refuses names that are not this machine (DNS rebinding)', () => {
    const a = allowedHosts('0.0.0.0', 7777, ['gpu-box.lan']);
    for (const ok of ['127.0.0.1:7777', 'localhost:7777', 'gpu-box.lan:7777', `${os.hostname().toLowerCase()}:7777`]) expect(a.has(ok), ok).toBe(true);
    for (const bad of ['evil.example:7777', 'attacker.rebind.network:7777', '127.0.0.1:7777.evil', 'gpu-box.lan:7778', '']) expect(a.has(bad), bad).toBe(false);
    for (const list of Object.values(os.networkInterfaces())) {
      for (const i of list ?? []) if (i.family === 'IPv4') expect(a.has(`${i.address}:7777`), i.address).toBe(true);
    }
    const lan = allowedHosts('192.168.1.20', 7777);
    expect(lan.has('192.168.1.20:7777')).toBe(true);
    expect(lan.has('evil.example:7777')).toBe(false);
  });

  it("on a LAN bind every answer carries the mark the page's banner reads, also a refused /session", async () => {
    // Not loopback by its name, reachable only from this machine: the LAN mark without opening a port to the LAN.
    const s = await start({ host: '::ffff:127.0.0.1' });
    const c = cookieOf(await get(s.port, codePath(s.url)));
    const r = await get(s.port, '/session', { cookie: c.header });
    expect(r.status).toBe(401);
    expect(r.headers['x-swan-exposure']).toBe('lan');
    const loop = await start();
    expect((await get(loop.port, '/session'))!.headers['x-swan-exposure']).toBeUndefined();
  });

  it('warns about plain HTTP on a non-loopback bind, and only there', () => {
    expect(exposureWarning('127.0.0.1', 7777)).toBeUndefined();
    expect(exposureWarning('localhost', 7777)).toBeUndefined();
    expect(exposureWarning('::1', 7777)).toBeUndefined();
    expect(exposureWarning('0.0.0.0', 7777)).toMatch(/plain HTTP/);
    expect(exposureWarning('192.168.1.20', 7777)).toMatch(/192\.168\.1\.20:7777/);
  });
});

describe("the page secret binds the session to the console's own page", () => {
  const origin = (s: ConsoleServer) => `http://127.0.0.1:${s.port}`;

  it('travels only in the fragment of the exchange that made the session: nothing to claim afterwards', async () => {
    const s = await start();
    const exchange = await get(s.port, codePath(s.url));
    const c = cookieOf(exchange);
    const page = pageFromLocation(exchange.headers.location)!;
    expect(page).toMatch(/^[A-Za-z0-9_-]{40,}$/);
    // Whoever holds the cookie (another local server the owner visits) asks for the secret in every way
    // the old claim allowed, with the console's Origin and the claim header: nothing carries it.
    for (const ask of [
      () => post(s.port, '/session/page', { cookie: c.header, origin: origin(s), 'x-swan-page': 'claim' }),
      () => get(s.port, '/session/page', { cookie: c.header, origin: origin(s), 'x-swan-page': 'claim' }),
      () => get(s.port, '/session', { cookie: c.header, origin: origin(s) }),
      () => get(s.port, '/', { cookie: c.header, origin: origin(s) }),
    ]) {
      expect(JSON.stringify(await ask())).not.toContain(page);
    }
    expect((await get(s.port, '/session', { cookie: c.header })).status).toBe(401);
    expect((await get(s.port, '/session', { cookie: c.header, 'x-swan-page': page })).status).toBe(204);
    expect((await get(s.port, '/session', { authorization: `Bearer ${s.token}` })).status).toBe(204);
    // Each exchange's secret belongs to its own session only.
    const other = await get(s.port, codePath(s.newUrl()));
    expect((await get(s.port, '/session', { cookie: cookieOf(other).header, 'x-swan-page': page })).status).toBe(401);
  });

  it('sessions end idle after SESSION_IDLE_MS and at most after SESSION_MAX_MS', () => {
    let now = 1_000_000;
    const auth = new ConsoleAuth(
      't'.repeat(32),
      () => 1,
      () => now,
    );
    const req = (cookie?: string) => ({ headers: cookie ? { cookie: `${cookieName(1)}=${cookie}` } : {}, socket: {} }) as unknown as http.IncomingMessage;
    const idle = auth.newSession(req());
    expect(auth.pageSession(req(idle.id), idle.page)).toBeDefined();
    expect(auth.pageSession(req(idle.id), 'x'.repeat(43))).toBeUndefined();
    now += SESSION_IDLE_MS + 1;
    expect(auth.pageSession(req(idle.id), idle.page)).toBeUndefined();
    const busy = auth.newSession(req());
    for (let t = 0; t < SESSION_MAX_MS; t += SESSION_IDLE_MS / 2) {
      now += SESSION_IDLE_MS / 2;
      if (t + SESSION_IDLE_MS / 2 < SESSION_MAX_MS)
        expect(auth.pageSession(req(busy.id), busy.page), `used every half day, day ${t / 86_400_000}`).toBeDefined();
    }
    now += 1;
    expect(auth.pageSession(req(busy.id), busy.page)).toBeUndefined();
    expect(auth.list()).toEqual([]);
  });

  it('Settings lists the open sessions; signing one out, or everywhere, closes their sockets at once', async () => {
    const s = await start();
    const a = await signIn(s.port, codePath(s.url));
    const b = await signIn(s.port, codePath(s.newUrl()));
    const open = (p: PageSession) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${s.port}/bridge`, pageProtocols(p), { headers: { cookie: p.cookie, origin: p.origin } });
        ws.once('open', () => resolve(ws));
        ws.once('error', reject);
      });
    const wa = await open(a);
    const wb = await open(b);
    const call = (ws: WebSocket, id: number, channel: string, args: unknown) =>
      new Promise<{ ok: boolean; value?: unknown }>((resolve) => {
        const on = (d: Buffer) => {
          const m = JSON.parse(String(d)) as { id?: number; reply?: { ok: boolean; value?: unknown } };
          if (m.id !== id) return;
          ws.off('message', on);
          resolve(m.reply!);
        };
        ws.on('message', on);
        ws.send(JSON.stringify({ id, channel, args }));
      });
    const list = (await call(wa, 1, 'console.sessions', {})).value as ConsoleSessionView[];
    expect(list).toHaveLength(2);
    expect(list.filter((x) => x.current)).toHaveLength(1);
    expect(JSON.stringify(list)).not.toContain(a.page);
    expect(JSON.stringify(list)).not.toContain(a.cookie.split('=')[1]);
    const other = list.find((x) => !x.current)!;
    const closedB = new Promise<number>((resolve) => wb.once('close', (code) => resolve(code)));
    expect((await call(wa, 2, 'console.signOut', { id: other.id })).value).toEqual({ ended: 1 });
    expect(await closedB).toBe(4401);
    expect((await get(s.port, '/', { cookie: b.cookie })).status).toBe(401);
    // Everywhere: this page's own session too (its reply arrives first, then the socket closes).
    const closedA = new Promise<number>((resolve) => wa.once('close', (code) => resolve(code)));
    expect((await call(wa, 3, 'console.signOut', {})).value).toEqual({ ended: 1 });
    expect(await closedA).toBe(4401);
    expect((await get(s.port, '/', { cookie: a.cookie })).status).toBe(401);
  });
});
