// The browser console: serves the built renderer and carries the bridge over a WebSocket at /bridge,
// so a headless rig shows the same UI as the desktop app. Every HTTP request and the WebSocket need a
// credential (see auth.ts): a browser opens a one-time link (or the token, e.g. a bookmark of a stable
// token file) once and then holds a session cookie; /metrics (Prometheus text) exists only when
// `metrics` is given and takes the token — scrapers send `Authorization: Bearer <token>` or `?token=`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { BridgeBackend } from '../../shared/bridge/transport';
import type { BridgeEvent } from '../../shared/bridge/events';
import { createEventBatcher, type EventBatcher } from '../../shared/batcher';
import type { Logger } from '../base/log';
import {
  allowedHosts,
  BRIDGE_PROTOCOL,
  ConsoleAuth,
  exposureWarning,
  hostAllowed,
  isLoopbackListen,
  newToken,
  offeredPageSecret,
  originAllowed,
  PAGE_FRAGMENT_PREFIX,
  PAGE_HEADER,
  sessionCookie,
} from './auth';
import { requestTarget } from '../http/request-target';
import { defaultConnectionCap, limitConnections, requestDeadlines } from '../http/connection-budget';
import type { ConsoleRoute } from './console-route';
import { serveBridgeSocket } from './bridge-socket';
import { resolveStatic, securityHeaders, sendFile } from './static-files';

export interface ConsoleServerOptions {
  backend: BridgeBackend;
  /** Listen address; 127.0.0.1 unless the owner opts into LAN access. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** The built renderer (out/renderer). */
  staticDir: string;
  /** Fixed access token (tests, or an owner who pins one); random otherwise. */
  token?: string;
  log?: Logger;
  /** Serve Prometheus text at /metrics. */
  metrics?: () => Promise<string> | string;
  /** Event batch interval (ms). */
  batchMs?: number;
  /** Extra Host names the console answers to when it listens on every interface (e.g. "gpu-box.lan"). */
  allowedHostNames?: string[];
  /** Routes with their own credentials (the fleet API, console-route.ts), asked before the console's own check. */
  routes?: ConsoleRoute[];
}

export interface ConsoleServer {
  /** `http://host:port/?code=…` — a one-time link to open (see auth.ts). */
  url: string;
  /** Another one-time link (each opens one browser session). */
  newUrl(): string;
  token: string;
  port: number;
  /** Set when other machines can reach the console (LAN bind over plain HTTP): printed and shown. */
  exposure?: string;
  close(): Promise<void>;
}

/** Largest WebSocket message accepted from a client. */
const MAX_CONSOLE_FRAME_BYTES = 1024 * 1024;
/** A client whose unsent data grows beyond this is too slow to follow; it is dropped and reconnects. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
const PING_MS = 30_000;
/** Close code of a socket whose session ended (signed out, expired): the page says so instead of reconnecting. */
export const SIGNED_OUT = 4401;

export async function startConsoleServer(opts: ConsoleServerOptions): Promise<ConsoleServer> {
  const host = opts.host ?? '127.0.0.1';
  const token = opts.token ?? newToken();
  const log = opts.log;
  let port = opts.port;
  const auth = new ConsoleAuth(token, () => port);
  // Filled once the port is known (no request arrives before listen).
  let allowed = new Set<string>();
  const lan = !isLoopbackListen(host);

  const clients = new Set<WebSocket>();
  const alive = new WeakSet<WebSocket>();
  /** Each page socket's session (public id); a program's token socket has none. */
  const sessionOf = new WeakMap<WebSocket, string>();
  // A session that ended (signed out, expired) takes its sockets with it, after the reply in flight.
  auth.onEnded = (ids) => {
    for (const ws of clients) {
      const sid = sessionOf.get(ws);
      if (sid !== undefined && ids.includes(sid)) setImmediate(() => ws.close(SIGNED_OUT, 'signed out'));
    }
  };
  let unsubscribe: (() => void) | undefined;
  let batcher: EventBatcher | undefined;

  const broadcast = (events: BridgeEvent[]) => {
    const text = JSON.stringify({ events });
    for (const ws of clients) {
      if (ws.readyState !== ws.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        log?.warn('console: a browser is not keeping up with live data; disconnecting it (it will reconnect)');
        ws.terminate();
        continue;
      }
      ws.send(text);
    }
  };

  // Events flow only while someone is watching.
  const attach = () => {
    if (unsubscribe) return;
    batcher = createEventBatcher(broadcast, opts.batchMs ?? 250);
    const b = batcher;
    unsubscribe = opts.backend.subscribe((e) => b.push(e));
  };
  const detach = () => {
    unsubscribe?.();
    unsubscribe = undefined;
    batcher?.close();
    batcher = undefined;
  };

  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CONSOLE_FRAME_BYTES,
    // The page offers [swan-bridge, swan-page.<secret>]: the answer names only the first.
    handleProtocols: (offered: Set<string>) => (offered.has(BRIDGE_PROTOCOL) ? BRIDGE_PROTOCOL : false),
  });
  wss.on('connection', (ws: WebSocket, _req: IncomingMessage, session?: string) => {
    if (session !== undefined) sessionOf.set(ws, session);
    clients.add(ws);
    alive.add(ws);
    attach();
    ws.on('pong', () => alive.add(ws));
    ws.on('error', (err) => log?.debug(`console: socket error: ${err.message}`));
    ws.on('close', () => {
      clients.delete(ws);
      if (clients.size === 0) detach();
    });
    serveBridgeSocket(ws, opts.backend, log, () => batcher?.flush(), {
      'console.sessions': () => auth.list(session),
      'console.signOut': (args) => ({ ended: auth.end((args as { id?: string }).id) }),
    });
  });

  const pinger = setInterval(() => {
    for (const ws of clients) {
      const sid = sessionOf.get(ws);
      if (sid !== undefined && !auth.isOpen(sid)) {
        ws.close(SIGNED_OUT, 'session expired');
        continue;
      }
      if (!alive.has(ws)) {
        ws.terminate();
        continue;
      }
      alive.delete(ws);
      ws.ping();
    }
  }, PING_MS);
  pinger.unref();

  const refuse = (res: ServerResponse, status: number, text: string) => {
    // The LAN mark goes on refusals too: the page's banner reads it from /session, which a page without its
    // secret is refused (the mark says only what anyone on the network can see).
    res.writeHead(status, { ...securityHeaders(`${host}:${port}`), ...(lan ? { 'X-Swan-Exposure': 'lan' } : {}), 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text + '\n');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = requestTarget(req.url);
    if (!url) return refuse(res, 400, 'The request target is not a path on this console.');
    if (!hostAllowed(req, allowed)) return refuse(res, 421, 'This console answers only on its own address.');
    const hostHeader = (req.headers.host as string).toLowerCase();
    const route = opts.routes?.find((r) => r.matches(url.pathname));
    if (route)
      return route.handle(req, res, url, {
        consoleCredential: () => auth.check(req, url, { acceptCode: false }),
        newCode: () => auth.newCode(),
        headers: securityHeaders(hostHeader),
      });
    const cred = auth.check(req, url, { acceptCode: true });
    if (!cred) {
      return refuse(
        res,
        401,
        'Access token missing or wrong. Open a new link from `swan-provider run` (each link works once; press Enter in its terminal for another), or your bookmark ending in ?token=… when the agent uses a token file.',
      );
    }
    const headers = securityHeaders(hostHeader);
    if (lan) headers['X-Swan-Exposure'] = 'lan';

    if (req.method !== 'GET' && req.method !== 'HEAD') return refuse(res, 405, 'Only GET is served here.');

    // A browser that brought a code or the token gets a session cookie and an address without them
    // (the history keeps nothing usable). /metrics and /session are for programs: no cookie there.
    // The page secret rides in the redirect's fragment: the browser hands it to the console's page and
    // never sends it to a server, so a server on another port that receives the cookie gets nothing more.
    if ((cred === 'code' || cred === 'token-query') && url.pathname !== '/metrics' && url.pathname !== '/session') {
      url.searchParams.delete('token');
      url.searchParams.delete('code');
      const session = auth.newSession(req);
      res.writeHead(302, {
        ...headers,
        'Set-Cookie': sessionCookie(port, session.id),
        Location: `/${url.pathname.replace(/^[/\\]+/, '')}${url.search}#${PAGE_FRAGMENT_PREFIX}${session.page}`,
      });
      return res.end();
    }
    const program = cred === 'token-header' || cred === 'token-query';

    if (url.pathname === '/metrics') {
      // A program's read: the token, never a cookie (which other local servers receive too).
      if (!program) return refuse(res, 401, 'Send the console token: "Authorization: Bearer <token>".');
      if (!opts.metrics) return refuse(res, 404, 'Metrics are off. Start the console with metrics enabled to scrape /metrics.');
      try {
        const body = await opts.metrics();
        res.writeHead(200, { ...headers, 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (err) {
        log?.warn(`console: metrics failed: ${(err as Error).message}`);
        refuse(res, 500, 'Metrics could not be collected; see the agent log.');
      }
      return;
    }
    if (url.pathname === '/session') {
      // The page asks whether its session (cookie + page secret) still holds; a program, whether its token does.
      const page = req.headers[PAGE_HEADER];
      if (!program && !auth.pageSession(req, typeof page === 'string' ? page : undefined))
        return refuse(res, 401, "This page's session ended: open a new console link.");
      res.writeHead(204, headers);
      return res.end();
    }
    const file = resolveStatic(opts.staticDir, url.pathname);
    if (!file) {
      return refuse(
        res,
        404,
        url.pathname === '/'
          ? 'The console UI is not built in this installation: the agent said why when it started (run `npm install` with dev dependencies, then start again).'
          : 'Not found.',
      );
    }
    sendFile(res, file, headers, req.method === 'HEAD');
  };

  // The console's own budget of connections and request deadlines: a flood at another port (the gateway)
  // or at this one leaves the rest of the agent its file descriptors (connection-budget.ts).
  const budget = { total: defaultConnectionCap(256), perAddress: defaultConnectionCap(256), headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };
  const server = http.createServer(requestDeadlines(budget), (req, res) => {
    handle(req, res).catch((err: unknown) => {
      log?.error(`console: request failed: ${(err as Error).message}`);
      if (!res.headersSent) refuse(res, 500, 'The console failed to answer; see the agent log.');
      else res.destroy();
    });
  });
  if (log) limitConnections(server, budget, log, 'the console');
  // Unparseable requests (Node's parser refused them) get a plain answer; the socket is closed after it.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });

  // CONNECT (proxy tunnels) is not served; without this listener Node would just drop the socket.
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    try {
      upgrade(req, socket, head);
    } catch (e) {
      log?.error(`console: a WebSocket upgrade failed: ${(e as Error).message}`);
      socket.destroy();
    }
  });
  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const reject = (status: number, text: string) => {
      log?.warn(`console: refused a WebSocket: ${text}`);
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${text}\n`);
    };
    const url = requestTarget(req.url);
    if (!url) return reject(400, 'The request target is not a path on this console.');
    if (url.pathname !== '/bridge') return reject(404, 'Unknown path; the bridge is at /bridge.');
    if (!hostAllowed(req, allowed)) return reject(421, 'Wrong host.');
    const cred = auth.check(req, url, { acceptCode: false });
    if (!cred) return reject(401, 'Access token missing or wrong.');
    let session: string | undefined;
    if (cred === 'token-header' || cred === 'token-query') {
      // A program with the token; a browser that sends one must still be on this console's own page.
      if (req.headers.origin !== undefined && !originAllowed(req)) return reject(403, 'Cross-origin WebSocket refused.');
    } else {
      // A browser page: this console's Origin, its session cookie and the page secret, all three. The cookie
      // reaches every local server the owner visits; the page secret only this console's own page holds.
      if (!originAllowed(req)) return reject(403, 'Cross-origin WebSocket refused.');
      session = auth.pageSession(req, offeredPageSecret(req));
      if (session === undefined) return reject(401, "This page's session is not valid (signed out, expired, or not this page): open a new console link.");
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req, session));
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  allowed = allowedHosts(host, port, opts.allowedHostNames);
  const exposure = exposureWarning(host, port);
  if (exposure) log?.warn(exposure);
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const newUrl = () => `http://${shownHost}:${port}/?code=${auth.newCode()}`;
  log?.info(`console listening on http://${shownHost}:${port}/`);

  let closing: Promise<void> | undefined;
  return {
    url: newUrl(),
    newUrl,
    token,
    port,
    ...(exposure ? { exposure } : {}),
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        clearInterval(pinger);
        detach();
        for (const ws of clients) ws.terminate();
        clients.clear();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
