// The browser console: serves the built renderer and carries the bridge over a WebSocket at /bridge,
// so a headless rig shows the same UI as the desktop app. Every HTTP request and the WebSocket need a
// credential (see auth.ts): a browser opens a one-time link (or the token, e.g. a bookmark of a stable
// token file) once and then holds a session cookie; /metrics (Prometheus text) exists only when
// `metrics` is given and takes the token — scrapers send `Authorization: Bearer <token>` or `?token=`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { BridgeBackend, BridgeEvent } from '../../shared/bridge';
import { createEventBatcher, type EventBatcher } from '../../shared/batcher';
import type { Logger } from '../log';
import { allowedHosts, ConsoleAuth, exposureWarning, hostAllowed, isLoopbackListen, newToken, originAllowed, sessionCookie } from './auth';
import { requestTarget } from '../http/request-target';
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

  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CONSOLE_FRAME_BYTES });
  wss.on('connection', (ws: WebSocket) => {
    clients.add(ws);
    alive.add(ws);
    attach();
    ws.on('pong', () => alive.add(ws));
    ws.on('error', (err) => log?.debug(`console: socket error: ${err.message}`));
    ws.on('close', () => {
      clients.delete(ws);
      if (clients.size === 0) detach();
    });
    serveBridgeSocket(ws, opts.backend, log, () => batcher?.flush());
  });

  const pinger = setInterval(() => {
    for (const ws of clients) {
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
    res.writeHead(status, { ...securityHeaders(`${host}:${port}`), 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(text + '\n');
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = requestTarget(req.url);
    if (!url) return refuse(res, 400, 'The request target is not a path on this console.');
    if (!hostAllowed(req, allowed)) return refuse(res, 421, 'This console answers only on its own address.');
    const hostHeader = (req.headers.host as string).toLowerCase();
    const route = opts.routes?.find((r) => r.matches(url.pathname));
    if (route) return route.handle(req, res, url, { consoleCredential: () => auth.check(req, url, { acceptCode: false }), newCode: () => auth.newCode(), headers: securityHeaders(hostHeader) });
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
    if ((cred === 'code' || cred === 'token-query') && url.pathname !== '/metrics' && url.pathname !== '/session') {
      url.searchParams.delete('token');
      url.searchParams.delete('code');
      res.writeHead(302, { ...headers, 'Set-Cookie': sessionCookie(port, auth.newSession()), Location: `${url.pathname}${url.search}` });
      return res.end();
    }

    if (url.pathname === '/metrics') {
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
      res.writeHead(204, headers);
      return res.end();
    }
    const file = resolveStatic(opts.staticDir, url.pathname);
    if (!file) {
      return refuse(res, 404, url.pathname === '/' ? 'The console UI is not built in this installation: the agent said why when it started (run `npm install` with dev dependencies, then start again).' : 'Not found.');
    }
    sendFile(res, file, headers, req.method === 'HEAD');
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log?.error(`console: request failed: ${(err as Error).message}`);
      if (!res.headersSent) refuse(res, 500, 'The console failed to answer; see the agent log.');
      else res.destroy();
    });
  });
  // Unparseable requests (Node's parser refused them) get a plain answer; the socket is closed after it.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
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
    // Pages of another site must never reach the bridge; a cookie alone proves nothing about the page.
    const origin = req.headers.origin;
    if (origin !== undefined ? !originAllowed(req) : cred === 'cookie') return reject(403, 'Cross-origin WebSocket refused.');
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });

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
