// The local gateway: one HTTP server (127.0.0.1 by default) carrying /v1/stream (stream-v1),
// /v1/ws (seed 002 relay), GET /v1/models and POST /v1/chat/completions. Every request passes the
// browser guard (Origin / Host) first; WebSocket refusals before the upgrade are plain HTTP answers
// with a JSON reason, so any client can show why.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { requestTarget } from '../http/request-target';
import { limitConnections, requestDeadlines } from '../http/connection-budget';
import { offeredProtocols, presentedKey } from './auth';
import { isLoopbackAddress, isLoopbackHost } from '../http/loopback';
import { KeyLimits } from './limits';
import { OpenAiHttp } from './openai-http';
import { resolveOptions, type GatewayOptions } from './options';
import { OriginPolicy } from './origin';
import { RelayService } from './relay-ws';
import { loadResumeKey, ResumeTokens } from './resume-token';
import { negotiate } from './stream-v1-messages';
import { StreamV1Service } from './stream-v1';
import { clipClientText, refusalLog } from './refusal-log';

/** How often revocations made elsewhere (CLI, console) are looked for: they take effect within this. */
export const REVOCATION_POLL_MS = 250;

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

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

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const o = resolveOptions(options);
  const log = o.log;
  const loopback = isLoopbackHost(o.host);
  const authOff = !o.websocketAuth && loopback;
  if (!o.websocketAuth && !loopback) {
    log.error(`WebsocketAuth = false is ignored: the gateway listens on ${o.host}, which other machines can reach. /v1/ws still needs an API key.`);
  } else if (authOff) {
    log.warn('WARNING: WebsocketAuth = false — /v1/ws accepts connections WITHOUT an API key from this machine. Use it for development only.');
  }
  if (!loopback) log.warn(`The gateway listens on ${o.host}: other machines on the network can use it with an API key.`);

  const tokens = new ResumeTokens(loadResumeKey(o.home, log));
  const limits = new KeyLimits(o.limits);
  const origins = new OriginPolicy(o.allowedOrigins, o.host);
  const stream = new StreamV1Service(o, tokens, limits);
  const relay = new RelayService(o, limits);
  const api = new OpenAiHttp(o, limits);

  // Revocation takes effect on what is already running: the keys file is re-read when it changed
  // (a stat per tick), and connections, streams and HTTP requests of keys no longer in it are ended.
  const isValid = (id: string) => o.keys.isValid(id);
  const revocations = setInterval(() => {
    try {
      stream.revoked(isValid);
      relay.revoked(isValid);
      api.revoked(isValid);
    } catch (e) {
      log.error(`checking for revoked keys failed: ${(e as Error).message}`);
    }
  }, REVOCATION_POLL_MS);
  revocations.unref();

  const wsOptions = { noServer: true, maxPayload: o.maxMessageBytes, perMessageDeflate: { threshold: 1024 }, clientTracking: false } as const;
  const streamWss = new WebSocketServer({ ...wsOptions, handleProtocols: (offered: Set<string>) => negotiate([...offered]).protocol ?? false });
  const relayWss = new WebSocketServer({ ...wsOptions, handleProtocols: (offered: Set<string>) => (offered.has('access_token') ? 'access_token' : false) });

  const BAD_TARGET = 'The request target is not a path on this server (it must start with a single "/").';

  /** A handler's failure ends its one request with a coded 500 (or a dropped socket), logged; nothing else. */
  const failed = (what: string, e: unknown, res?: ServerResponse, socket?: Duplex) => {
    log.error(`${what} failed inside the gateway: ${(e as Error).stack ?? e}`, { code: 'handler_failed' });
    if (res && !res.headersSent && !res.destroyed) {
      const body = JSON.stringify({
        error: { message: 'The gateway failed to handle this request; see the agent log.', type: 'server_error', param: null, code: 'internal_error' },
      });
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
      res.end(body);
    } else res?.destroy();
    socket?.destroy();
  };

  // Its own budget of connections and deadlines for requests to arrive: a flood here leaves the hub link,
  // the engines and the console the descriptors and the time they need (connection-budget.ts).
  const budget = {
    total: o.maxConnections,
    perAddress: o.maxConnectionsPerAddress,
    headersTimeoutMs: o.headersTimeoutMs,
    requestTimeoutMs: o.requestTimeoutMs,
  };
  // Refusal lines carry client-chosen text: clipped and rate-limited, so a flood cannot fill the disk.
  const refusals = refusalLog(log);
  const server = http.createServer(requestDeadlines(budget), (req: IncomingMessage, res: ServerResponse) => {
    try {
      onRequest(req, res);
    } catch (e) {
      failed(`${req.method} request`, e, res);
    }
  });
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = requestTarget(req.url);
    if (!url) {
      refusals.refused('debug', `refused ${clipClientText(req.method ?? '', 16)} with a malformed request target`);
      const body = JSON.stringify({ error: { message: BAD_TARGET, type: 'invalid_request_error', param: null, code: 'bad_request_target' } });
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
      res.end(body);
      return;
    }
    const denied = origins.check(req);
    if (denied) {
      refusals.refused('warn', `refused ${clipClientText(req.method ?? '', 16)} ${clipClientText(url.pathname)}: ${clipClientText(denied.message)}`);
      const body = JSON.stringify({ error: { message: denied.message, type: 'permission_error', param: null, code: denied.code } });
      res.writeHead(403, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    origins.cors(req, res);
    api.handle(req, res, url).catch((e: unknown) => failed(`${req.method} ${url.pathname}`, e, res));
  };

  limitConnections(server, budget, log, 'the local gateway');

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', (e) => log.debug(`upgrade socket: ${e.message}`));
    try {
      onUpgrade(req, socket, head);
    } catch (e) {
      failed('a WebSocket upgrade', e, undefined, socket);
    }
  });
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = requestTarget(req.url);
    if (!url) {
      refusals.refused('debug', 'refused a WebSocket with a malformed request target');
      return refuse(socket, 400, BAD_TARGET);
    }
    const denied = origins.check(req);
    if (denied) {
      refusals.refused('warn', `refused a WebSocket to ${clipClientText(url.pathname)}: ${clipClientText(denied.message)}`);
      return refuse(socket, 403, denied.message, {}, denied.code);
    }
    const key = presentedKey(req, url);
    if (url.pathname === '/v1/stream') {
      const n = negotiate(offeredProtocols(req));
      if (n.refuse) {
        refusals.refused('info', `refused a /v1/stream connection: ${clipClientText(n.refuse)}`);
        return refuse(socket, 400, n.refuse, { 'X-Stream-Protocols': 'stream-v1' }, n.code);
      }
      streamWss.handleUpgrade(req, socket, head, (ws: WebSocket) => stream.handle(ws, key));
      return;
    }
    if (url.pathname === '/v1/ws') {
      const anonymousOk = authOff && isLoopbackAddress(req.socket.remoteAddress);
      relayWss.handleUpgrade(req, socket, head, (ws: WebSocket) => relay.handle(ws, key, anonymousOk));
      return;
    }
    refuse(socket, 404, `No WebSocket endpoint at ${url.pathname}; use /v1/stream (stream-v1) or /v1/ws.`);
  };
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    refuse(socket, 405, 'CONNECT is not served by this gateway.');
  });
  server.on('clientError', (err, socket) => {
    log.debug(`bad HTTP request: ${err.message}`);
    const status =
      (err as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW' ? 431 : (err as NodeJS.ErrnoException).code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (socket.writable) socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      reject(
        new Error(
          e.code === 'EADDRINUSE'
            ? `Gateway port ${o.port} on ${o.host} is already in use; pick another [Gateway] Listen in config.toml or stop the other program.`
            : `The gateway could not listen on ${o.host}:${o.port}: ${e.message}`,
        ),
      );
    };
    server.once('error', onError);
    server.listen(o.port, o.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = o.host.includes(':') ? `[${o.host}]` : o.host;
  const url = `http://${shownHost}:${port}`;
  log.info(`local gateway listening on ${url} (/v1/stream, /v1/ws, /v1/models, /v1/chat/completions)`);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close: () => {
      closing ??= (async () => {
        clearInterval(revocations);
        stream.close();
        relay.close();
        streamWss.close();
        relayWss.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        log.info('local gateway stopped');
      })();
      return closing;
    },
  };
}
