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

export async function startConsoleServer(deps: ConsoleServerOptions): Promise<ConsoleServer> {
  const server = new BrowserConsoleServer(deps);
  await server.listen();
  return server;
}

class BrowserConsoleServer implements ConsoleServer {
  readonly token: string;
  /** The port asked for until listen() learns the one bound (0 picks a free port). */
  port: number;
  /** Set by listen(): a link made before the port is known would name the wrong port. */
  url = '';
  exposure?: string;

  private readonly log: Logger | undefined;
  private readonly host: string;
  private readonly lan: boolean;
  private readonly auth: ConsoleAuth;
  // Filled once the port is known (no request arrives before listen).
  private allowed = new Set<string>();
  private readonly clients = new Set<WebSocket>();
  private readonly alive = new WeakSet<WebSocket>();
  /** Each page socket's session (public id); a program's token socket has none. */
  private readonly sessionOf = new WeakMap<WebSocket, string>();
  private unsubscribe: (() => void) | undefined;
  private batcher: EventBatcher | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  // The console's own budget of connections and request deadlines: a flood at another port (the gateway)
  // or at this one leaves the rest of the agent its file descriptors (connection-budget.ts).
  private readonly budget = { total: defaultConnectionCap(256), perAddress: defaultConnectionCap(256), headersTimeoutMs: 10_000, requestTimeoutMs: 30_000 };
  private readonly server = http.createServer(requestDeadlines(this.budget), (req, res) => this.onRequest(req, res));
  private readonly wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_CONSOLE_FRAME_BYTES,
    // The page offers [swan-bridge, swan-page.<secret>]: the answer names only the first.
    handleProtocols: (offered: Set<string>) => (offered.has(BRIDGE_PROTOCOL) ? BRIDGE_PROTOCOL : false),
  });

  constructor(private readonly deps: ConsoleServerOptions) {
    this.log = deps.log;
    this.host = deps.host ?? '127.0.0.1';
    this.token = deps.token ?? newToken();
    this.port = deps.port;
    this.lan = !isLoopbackListen(this.host);
    this.auth = new ConsoleAuth(this.token, () => this.port);
  }

  async listen(): Promise<void> {
    this.wire();
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.deps.port, this.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.allowed = allowedHosts(this.host, this.port, this.deps.allowedHostNames);
    this.exposure = exposureWarning(this.host, this.port);
    if (this.exposure) this.log?.warn(this.exposure);
    this.log?.info(`console listening on http://${this.shownHost}:${this.port}/`);
    this.url = this.newUrl();
    this.pinger = setInterval(() => this.sweep(), PING_MS);
    this.pinger.unref();
  }

  newUrl(): string {
    return `http://${this.shownHost}:${this.port}/?code=${this.auth.newCode()}`;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      clearInterval(this.pinger);
      this.detach();
      for (const ws of this.clients) ws.terminate();
      this.clients.clear();
      this.wss.close();
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    return this.closing;
  }

  /** A wildcard bind is not an address a browser can open; an IPv6 literal needs brackets in a URL. */
  private get shownHost(): string {
    const host = this.host;
    return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  }

  // Every listener is on before the port opens: no request may meet a half-wired server.
  private wire(): void {
    this.auth.onEnded = (ids) => this.endSessions(ids);
    this.wss.on('connection', (ws: WebSocket, _req: IncomingMessage, session?: string) => this.onSocket(ws, session));
    if (this.log) limitConnections(this.server, this.budget, this.log, 'the console');
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
    this.server.on('connect', (_req: IncomingMessage, socket: Duplex) => this.onConnect(socket));
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
  }

  // A session that ended (signed out, expired) takes its sockets with it, after the reply in flight.
  private endSessions(ids: string[]): void {
    for (const ws of this.clients) {
      const sid = this.sessionOf.get(ws);
      if (sid !== undefined && ids.includes(sid)) setImmediate(() => ws.close(SIGNED_OUT, 'signed out'));
    }
  }

  private onSocket(ws: WebSocket, session: string | undefined): void {
    if (session !== undefined) this.sessionOf.set(ws, session);
    this.clients.add(ws);
    this.alive.add(ws);
    this.attach();
    ws.on('pong', () => this.alive.add(ws));
    ws.on('error', (err) => this.log?.debug(`console: socket error: ${err.message}`));
    ws.on('close', () => {
      this.clients.delete(ws);
      if (this.clients.size === 0) this.detach();
    });
    serveBridgeSocket(ws, this.deps.backend, this.log, () => this.batcher?.flush(), {
      'console.sessions': () => this.auth.list(session),
      'console.signOut': (args) => ({ ended: this.auth.end((args as { id?: string }).id) }),
    });
  }

  // A session can expire without a request to notice it, and a peer can vanish without closing: each tick
  // closes the one and drops the other (a socket that did not answer the last ping).
  private sweep(): void {
    for (const ws of this.clients) {
      const sid = this.sessionOf.get(ws);
      if (sid !== undefined && !this.auth.isOpen(sid)) {
        ws.close(SIGNED_OUT, 'session expired');
        continue;
      }
      if (!this.alive.has(ws)) {
        ws.terminate();
        continue;
      }
      this.alive.delete(ws);
      ws.ping();
    }
  }

  // Events flow only while someone is watching.
  private attach(): void {
    if (this.unsubscribe) return;
    const batcher = createEventBatcher((events) => this.broadcast(events), this.deps.batchMs ?? 250);
    this.batcher = batcher;
    this.unsubscribe = this.deps.backend.subscribe((e) => batcher.push(e));
  }

  private detach(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.batcher?.close();
    this.batcher = undefined;
  }

  private broadcast(events: BridgeEvent[]): void {
    const text = JSON.stringify({ events });
    for (const ws of this.clients) {
      if (ws.readyState !== ws.OPEN) continue;
      if (ws.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.log?.warn('console: a browser is not keeping up with live data; disconnecting it (it will reconnect)');
        ws.terminate();
        continue;
      }
      ws.send(text);
    }
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.handle(req, res).catch((err: unknown) => {
      this.log?.error(`console: request failed: ${(err as Error).message}`);
      if (!res.headersSent) this.refuse(res, 500, 'The console failed to answer; see the agent log.');
      else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = requestTarget(req.url);
    if (!url) return this.refuse(res, 400, 'The request target is not a path on this console.');
    if (!hostAllowed(req, this.allowed)) return this.refuse(res, 421, 'This console answers only on its own address.');
    const hostHeader = (req.headers.host as string).toLowerCase();
    const route = this.deps.routes?.find((r) => r.matches(url.pathname));
    if (route)
      return route.handle(req, res, url, {
        consoleCredential: () => this.auth.check(req, url, { acceptCode: false }),
        newCode: () => this.auth.newCode(),
        headers: securityHeaders(hostHeader),
      });
    const cred = this.auth.check(req, url, { acceptCode: true });
    if (!cred) {
      return this.refuse(
        res,
        401,
        'Access token missing or wrong. Open a new link from `swan-provider run` (each link works once; press Enter in its terminal for another), or your bookmark ending in ?token=… when the agent uses a token file.',
      );
    }
    const headers = securityHeaders(hostHeader);
    if (this.lan) headers['X-Swan-Exposure'] = 'lan';

    if (req.method !== 'GET' && req.method !== 'HEAD') return this.refuse(res, 405, 'Only GET is served here.');

    // A browser that brought a code or the token gets a session cookie and an address without them
    // (the history keeps nothing usable). /metrics and /session are for programs: no cookie there.
    if ((cred === 'code' || cred === 'token-query') && url.pathname !== '/metrics' && url.pathname !== '/session')
      return this.startSession(req, res, url, headers);
    const program = cred === 'token-header' || cred === 'token-query';
    if (url.pathname === '/metrics') return this.serveMetrics(req, res, program, headers);
    if (url.pathname === '/session') return this.serveSession(req, res, program, headers);
    this.serveStatic(req, res, url, headers);
  }

  // The page secret rides in the redirect's fragment: the browser hands it to the console's page and
  // never sends it to a server, so a server on another port that receives the cookie gets nothing more.
  private startSession(req: IncomingMessage, res: ServerResponse, url: URL, headers: Record<string, string>): void {
    url.searchParams.delete('token');
    url.searchParams.delete('code');
    const session = this.auth.newSession(req);
    res.writeHead(302, {
      ...headers,
      'Set-Cookie': sessionCookie(this.port, session.id),
      Location: `/${url.pathname.replace(/^[/\\]+/, '')}${url.search}#${PAGE_FRAGMENT_PREFIX}${session.page}`,
    });
    res.end();
  }

  private async serveMetrics(req: IncomingMessage, res: ServerResponse, program: boolean, headers: Record<string, string>): Promise<void> {
    // A program's read: the token, never a cookie (which other local servers receive too).
    if (!program) return this.refuse(res, 401, 'Send the console token: "Authorization: Bearer <token>".');
    if (!this.deps.metrics) return this.refuse(res, 404, 'Metrics are off. Start the console with metrics enabled to scrape /metrics.');
    try {
      const body = await this.deps.metrics();
      res.writeHead(200, { ...headers, 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (err) {
      this.log?.warn(`console: metrics failed: ${(err as Error).message}`);
      this.refuse(res, 500, 'Metrics could not be collected; see the agent log.');
    }
  }

  // The page asks whether its session (cookie + page secret) still holds; a program, whether its token does.
  private serveSession(req: IncomingMessage, res: ServerResponse, program: boolean, headers: Record<string, string>): void {
    const page = req.headers[PAGE_HEADER];
    if (!program && !this.auth.pageSession(req, typeof page === 'string' ? page : undefined))
      return this.refuse(res, 401, "This page's session ended: open a new console link.");
    res.writeHead(204, headers);
    res.end();
  }

  private serveStatic(req: IncomingMessage, res: ServerResponse, url: URL, headers: Record<string, string>): void {
    const file = resolveStatic(this.deps.staticDir, url.pathname);
    if (!file) {
      return this.refuse(
        res,
        404,
        url.pathname === '/'
          ? 'The console UI is not built in this installation: the agent said why when it started (run `npm install` with dev dependencies, then start again).'
          : 'Not found.',
      );
    }
    sendFile(res, file, headers, req.method === 'HEAD');
  }

  private refuse(res: ServerResponse, status: number, text: string): void {
    // The LAN mark goes on refusals too: the page's banner reads it from /session, which a page without its
    // secret is refused (the mark says only what anyone on the network can see).
    res.writeHead(status, {
      ...securityHeaders(`${this.host}:${this.port}`),
      ...(this.lan ? { 'X-Swan-Exposure': 'lan' } : {}),
      'Content-Type': 'text/plain; charset=utf-8',
    });
    res.end(text + '\n');
  }

  // Unparseable requests (Node's parser refused them) get a plain answer; the socket is closed after it.
  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  }

  // CONNECT (proxy tunnels) is not served; without this listener Node would just drop the socket.
  private onConnect(socket: Duplex): void {
    socket.on('error', () => socket.destroy());
    socket.end('HTTP/1.1 405 Method Not Allowed\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    try {
      this.upgrade(req, socket, head);
    } catch (e) {
      this.log?.error(`console: a WebSocket upgrade failed: ${(e as Error).message}`);
      socket.destroy();
    }
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = requestTarget(req.url);
    if (!url) return this.refuseUpgrade(socket, 400, 'The request target is not a path on this console.');
    if (url.pathname !== '/bridge') return this.refuseUpgrade(socket, 404, 'Unknown path; the bridge is at /bridge.');
    if (!hostAllowed(req, this.allowed)) return this.refuseUpgrade(socket, 421, 'Wrong host.');
    const cred = this.auth.check(req, url, { acceptCode: false });
    if (!cred) return this.refuseUpgrade(socket, 401, 'Access token missing or wrong.');
    let session: string | undefined;
    if (cred === 'token-header' || cred === 'token-query') {
      // A program with the token; a browser that sends one must still be on this console's own page.
      if (req.headers.origin !== undefined && !originAllowed(req)) return this.refuseUpgrade(socket, 403, 'Cross-origin WebSocket refused.');
    } else {
      // A browser page: this console's Origin, its session cookie and the page secret, all three. The cookie
      // reaches every local server the owner visits; the page secret only this console's own page holds.
      if (!originAllowed(req)) return this.refuseUpgrade(socket, 403, 'Cross-origin WebSocket refused.');
      session = this.auth.pageSession(req, offeredPageSecret(req));
      if (session === undefined)
        return this.refuseUpgrade(socket, 401, "This page's session is not valid (signed out, expired, or not this page): open a new console link.");
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req, session));
  }

  private refuseUpgrade(socket: Duplex, status: number, text: string): void {
    this.log?.warn(`console: refused a WebSocket: ${text}`);
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${text}\n`);
  }
}
