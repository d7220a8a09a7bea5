// The local gateway: one HTTP server (127.0.0.1 by default) carrying /v1/stream (stream-v1),
// /v1/ws (seed 002 relay), GET /v1/models and POST /v1/chat/completions. Every request passes the
// browser guard (Origin / Host) first; WebSocket refusals before the upgrade are plain HTTP answers
// with a JSON reason, so any client can show why.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Logger } from '../base/log';
import { requestTarget } from '../http/request-target';
import { limitConnections, requestDeadlines, type ConnectionBudget } from '../http/connection-budget';
import { offeredProtocols, presentedKey } from './auth';
import { isLoopbackAddress, isLoopbackHost } from '../http/loopback';
import { KeyLimits } from './limits';
import { OpenAiHttp } from './openai-http';
import { resolveOptions, type GatewayOptions, type ResolvedGatewayOptions } from './options';
import { OriginPolicy } from './origin';
import { RelayService } from './relay-ws';
import { loadResumeKey, ResumeTokens } from './resume-token';
import { negotiate } from './stream-v1-messages';
import { StreamV1Service } from './stream-v1';
import { clipClientText, refusalLog, type RefusalLog } from './refusal-log';

/** How often revocations made elsewhere (CLI, console) are looked for: they take effect within this. */
export const REVOCATION_POLL_MS = 250;

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const BAD_TARGET = 'The request target is not a path on this server (it must start with a single "/").';

/** A refused upgrade: `code` is the HTTP status (as before); `reason` is the stable string code. */
function refuse(socket: Duplex, status: number, message: string, headers: Record<string, string> = {}, reason?: string): void {
  const body = JSON.stringify({ error: { code: status, ...(reason ? { reason } : {}), message } });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`,
  );
}

/** An HTTP error in the OpenAI shape; `close` ends the connection after it. */
function sendError(res: ServerResponse, status: number, error: { message: string; type: string; code: string }, close = false): void {
  const body = JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(close ? { connection: 'close' } : {}) });
  res.end(body);
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const gateway = new LocalGateway(options);
  await gateway.listen();
  return gateway;
}

class LocalGateway implements Gateway {
  /** The port asked for until listen() learns the one bound (0 picks a free port). */
  port: number;
  /** Set by listen(), once the port is known. */
  url = '';

  private readonly deps: ResolvedGatewayOptions;
  private readonly log: Logger;
  private readonly loopback: boolean;
  private readonly authOff: boolean;
  private readonly origins: OriginPolicy;
  private readonly stream: StreamV1Service;
  private readonly relay: RelayService;
  private readonly api: OpenAiHttp;
  private readonly streamWss: WebSocketServer;
  private readonly relayWss: WebSocketServer;
  private readonly budget: ConnectionBudget;
  private readonly refusals: RefusalLog;
  private readonly server: http.Server;
  private revocations: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;

  constructor(options: GatewayOptions) {
    const deps = resolveOptions(options);
    this.deps = deps;
    this.log = deps.log;
    this.port = deps.port;
    this.loopback = isLoopbackHost(deps.host);
    this.authOff = !deps.websocketAuth && this.loopback;
    const tokens = new ResumeTokens(loadResumeKey(deps.home, deps.log));
    const limits = new KeyLimits(deps.limits);
    this.origins = new OriginPolicy(deps.allowedOrigins, deps.host);
    this.stream = new StreamV1Service(deps, tokens, limits);
    this.relay = new RelayService(deps, limits);
    this.api = new OpenAiHttp(deps, limits);

    const wsOptions = { noServer: true, maxPayload: deps.maxMessageBytes, perMessageDeflate: { threshold: 1024 }, clientTracking: false } as const;
    this.streamWss = new WebSocketServer({ ...wsOptions, handleProtocols: (offered: Set<string>) => negotiate([...offered]).protocol ?? false });
    this.relayWss = new WebSocketServer({ ...wsOptions, handleProtocols: (offered: Set<string>) => (offered.has('access_token') ? 'access_token' : false) });

    // Its own budget of connections and deadlines for requests to arrive: a flood here leaves the hub link,
    // the engines and the console the descriptors and the time they need (connection-budget.ts).
    this.budget = {
      total: deps.maxConnections,
      perAddress: deps.maxConnectionsPerAddress,
      headersTimeoutMs: deps.headersTimeoutMs,
      requestTimeoutMs: deps.requestTimeoutMs,
    };
    // Refusal lines carry client-chosen text: clipped and rate-limited, so a flood cannot fill the disk.
    this.refusals = refusalLog(deps.log);
    this.server = http.createServer(requestDeadlines(this.budget), (req: IncomingMessage, res: ServerResponse) => this.onRequest(req, res));
  }

  async listen(): Promise<void> {
    this.warnExposure();
    this.pollRevocations();
    this.wire();
    await this.bind();
    this.port = (this.server.address() as AddressInfo).port;
    const host = this.deps.host;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${this.port}`;
    this.log.info(`local gateway listening on ${this.url} (/v1/stream, /v1/ws, /v1/models, /v1/chat/completions)`);
  }

  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    clearInterval(this.revocations);
    this.stream.close();
    this.relay.close();
    this.streamWss.close();
    this.relayWss.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    this.log.info('local gateway stopped');
  }

  private warnExposure(): void {
    const host = this.deps.host;
    if (!this.deps.websocketAuth && !this.loopback) {
      this.log.error(`WebsocketAuth = false is ignored: the gateway listens on ${host}, which other machines can reach. /v1/ws still needs an API key.`);
    } else if (this.authOff) {
      this.log.warn('WARNING: WebsocketAuth = false — /v1/ws accepts connections WITHOUT an API key from this machine. Use it for development only.');
    }
    if (!this.loopback) this.log.warn(`The gateway listens on ${host}: other machines on the network can use it with an API key.`);
  }

  // Revocation takes effect on what is already running: the keys file is re-read when it changed
  // (a stat per tick), and connections, streams and HTTP requests of keys no longer in it are ended.
  private pollRevocations(): void {
    const isValid = (id: string) => this.deps.keys.isValid(id);
    this.revocations = setInterval(() => {
      try {
        this.stream.revoked(isValid);
        this.relay.revoked(isValid);
        this.api.revoked(isValid);
      } catch (e) {
        this.log.error(`checking for revoked keys failed: ${(e as Error).message}`);
      }
    }, REVOCATION_POLL_MS);
    this.revocations.unref();
  }

  // Every listener is on before the port opens: no request may meet a half-wired server.
  private wire(): void {
    limitConnections(this.server, this.budget, this.log, 'the local gateway');
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    this.server.on('connect', (_req: IncomingMessage, socket: Duplex) => this.onConnect(socket));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
  }

  private bind(): Promise<void> {
    const { host, port } = this.deps;
    return new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        reject(
          new Error(
            e.code === 'EADDRINUSE'
              ? `Gateway port ${port} on ${host} is already in use; pick another [Gateway] Listen in config.toml or stop the other program.`
              : `The gateway could not listen on ${host}:${port}: ${e.message}`,
          ),
        );
      };
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        resolve();
      });
    });
  }

  /** A handler's failure ends its one request with a coded 500 (or a dropped socket), logged; nothing else. */
  private failed(what: string, e: unknown, res?: ServerResponse, socket?: Duplex): void {
    this.log.error(`${what} failed inside the gateway: ${(e as Error).stack ?? e}`, { code: 'handler_failed' });
    if (res && !res.headersSent && !res.destroyed) {
      sendError(res, 500, { message: 'The gateway failed to handle this request; see the agent log.', type: 'server_error', code: 'internal_error' }, true);
    } else res?.destroy();
    socket?.destroy();
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    try {
      this.route(req, res);
    } catch (e) {
      this.failed(`${req.method} request`, e, res);
    }
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const url = requestTarget(req.url);
    if (!url) {
      this.refusals.refused('debug', `refused ${clipClientText(req.method ?? '', 16)} with a malformed request target`);
      return sendError(res, 400, { message: BAD_TARGET, type: 'invalid_request_error', code: 'bad_request_target' }, true);
    }
    const denied = this.origins.check(req);
    if (denied) {
      this.refusals.refused('warn', `refused ${clipClientText(req.method ?? '', 16)} ${clipClientText(url.pathname)}: ${clipClientText(denied.message)}`);
      return sendError(res, 403, { message: denied.message, type: 'permission_error', code: denied.code });
    }
    this.origins.cors(req, res);
    this.api.handle(req, res, url).catch((e: unknown) => this.failed(`${req.method} ${url.pathname}`, e, res));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', (e) => this.log.debug(`upgrade socket: ${e.message}`));
    try {
      this.upgrade(req, socket, head);
    } catch (e) {
      this.failed('a WebSocket upgrade', e, undefined, socket);
    }
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = requestTarget(req.url);
    if (!url) {
      this.refusals.refused('debug', 'refused a WebSocket with a malformed request target');
      return refuse(socket, 400, BAD_TARGET);
    }
    const denied = this.origins.check(req);
    if (denied) {
      this.refusals.refused('warn', `refused a WebSocket to ${clipClientText(url.pathname)}: ${clipClientText(denied.message)}`);
      return refuse(socket, 403, denied.message, {}, denied.code);
    }
    const key = presentedKey(req, url);
    if (url.pathname === '/v1/stream') return this.upgradeStream(req, socket, head, key);
    if (url.pathname === '/v1/ws') return this.upgradeRelay(req, socket, head, key);
    refuse(socket, 404, `No WebSocket endpoint at ${url.pathname}; use /v1/stream (stream-v1) or /v1/ws.`);
  }

  private upgradeStream(req: IncomingMessage, socket: Duplex, head: Buffer, key: string | undefined): void {
    const n = negotiate(offeredProtocols(req));
    if (n.refuse) {
      this.refusals.refused('info', `refused a /v1/stream connection: ${clipClientText(n.refuse)}`);
      return refuse(socket, 400, n.refuse, { 'X-Stream-Protocols': 'stream-v1' }, n.code);
    }
    this.streamWss.handleUpgrade(req, socket, head, (ws: WebSocket) => this.stream.handle(ws, key));
  }

  private upgradeRelay(req: IncomingMessage, socket: Duplex, head: Buffer, key: string | undefined): void {
    const anonymousOk = this.authOff && isLoopbackAddress(req.socket.remoteAddress);
    this.relayWss.handleUpgrade(req, socket, head, (ws: WebSocket) => this.relay.handle(ws, key, anonymousOk));
  }

  // CONNECT (proxy tunnels) is not served; without this listener Node would just drop the socket.
  private onConnect(socket: Duplex): void {
    socket.on('error', () => socket.destroy());
    refuse(socket, 405, 'CONNECT is not served by this gateway.');
  }

  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    this.log.debug(`bad HTTP request: ${err.message}`);
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  }
}
