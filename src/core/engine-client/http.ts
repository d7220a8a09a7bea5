// The one HTTP client for engines. Every byte the agent sends to an inference engine leaves through
// openEngine(): inference (stream and JSON, engine/client.ts), health checks and the deep probe, discovery,
// context windows, capacity and metadata reads, Ollama's load, pull and tags. What it gives every call:
// the engine's key (`Authorization: Bearer`), the caller's abort signal, a timeout that covers the wait for
// headers (and the body, until done()), a size cap on what is read, and one error type (EngineHttpError:
// the engine's status, or 502 unreachable with the socket's code, 504 no answer in time, 499 cancelled).
// Inference keeps connections alive (a pooled agent); probes of arbitrary ports never leave a socket behind.
import http from 'node:http';
import https from 'node:https';
import { EngineHttpError } from './types';
import { normalizeBaseUrl } from './url';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

const httpAgent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000 });
const httpsAgent = new https.Agent({ keepAlive: true, keepAliveMsecs: 1000 });

/** A request body: JSON (a value), or bytes of a given content type (multipart uploads). */
export type EngineBody = { json: unknown } | { bytes: Buffer; contentType: string };

export interface EngineHttpRequest {
  /** The engine's base URL (models.json form: /v1 and a trailing slash are dropped). */
  url: string;
  /** Path on the engine, from its root: '/v1/models', '/api/show' … */
  path: string;
  method?: 'GET' | 'POST';
  body?: EngineBody;
  /** Sent as `Authorization: Bearer …`. */
  apiKey?: string;
  signal?: AbortSignal;
  /** Covers the wait for headers, and the body until done() is called. */
  timeoutMs: number;
  accept?: string;
  /** A pooled keep-alive connection (inference), else a fresh one closed after the answer (probes). */
  keepAlive?: boolean;
}

export interface Opened {
  res: http.IncomingMessage;
  req: http.ClientRequest;
  /** The engine's base URL, for messages. */
  base: string;
  /** Stops the timer and the abort listener. */
  done: () => void;
  /** The timer fired (the answer did not come, or did not finish, in time). */
  timedOut: () => boolean;
}

export function cancelledError(base: string): EngineHttpError {
  return new EngineHttpError(`the request to the engine at ${base} was cancelled`, 499);
}

/**
 * Sends one request and resolves once the engine answered with headers, whatever the status; rejects
 * with EngineHttpError when no answer came (refused, reset, timeout: 502/504) or the signal aborted (499).
 * A kept-alive socket the engine had already closed is retried once on a fresh one, as Node's docs advise.
 */
export function openEngine(r: EngineHttpRequest, retryStale = true): Promise<Opened> {
  let base: string;
  try {
    base = normalizeBaseUrl(r.url);
  } catch (e) {
    return Promise.reject(new EngineHttpError(`the engine address "${r.url}" is not usable: ${(e as Error).message}`, 502));
  }
  const url = new URL(base + r.path);
  const headers: http.OutgoingHttpHeaders = { accept: r.accept ?? 'application/json' };
  let payload: Buffer | undefined;
  if (r.body && 'json' in r.body) {
    payload = Buffer.from(JSON.stringify(r.body.json));
    headers['content-type'] = 'application/json';
  } else if (r.body) {
    payload = r.body.bytes;
    headers['content-type'] = r.body.contentType;
  }
  if (payload) headers['content-length'] = payload.length;
  if (r.apiKey) headers.authorization = `Bearer ${r.apiKey}`;
  const secure = url.protocol === 'https:';
  const agent = r.keepAlive ? (secure ? httpsAgent : httpAgent) : false;
  const signal = r.signal;

  return new Promise<Opened>((resolve, reject) => {
    if (signal?.aborted) return reject(cancelledError(base));
    const req = (secure ? https : http).request(url, { method: r.method ?? (payload ? 'POST' : 'GET'), agent, headers });
    let settled = false;
    let gotResponse = false;
    let timedOut = false;
    const onAbort = () => req.destroy(cancelledError(base));
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new EngineHttpError(`the engine at ${base} did not answer within ${Math.round(r.timeoutMs / 100) / 10} s`, 504));
    }, r.timeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (e: EngineHttpError) => {
      done();
      if (!settled) {
        settled = true;
        reject(e);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      if (retryStale && !gotResponse && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        done();
        settled = true;
        openEngine(r, false).then(resolve, reject);
        return;
      }
      if (err instanceof EngineHttpError) return fail(err);
      fail(
        new EngineHttpError(
          `could not reach the engine at ${base} (${err.code ?? err.message}); check that it is running`,
          502,
          undefined,
          err.code ?? 'ECONNRESET',
        ),
      );
    });
    req.on('response', (res) => {
      gotResponse = true;
      res.on('error', () => undefined); // surfaced through reading; never an uncaught 'error'
      settled = true;
      resolve({ res, req, base, done, timedOut: () => timedOut });
    });
    req.end(payload);
  });
}

/** Reads a response body up to `limit` bytes; over it, the connection is closed and a 502 thrown. */
export async function readBody(res: http.IncomingMessage, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    size += (c as Buffer).length;
    if (size > limit) {
      res.destroy();
      throw new EngineHttpError(`the engine answer is larger than ${limit} bytes`, 502);
    }
    parts.push(c as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

/** A whole small answer, as probes read it: never thrown, the status 0 when none came. */
export interface GetResult {
  /** HTTP status, or 0 when no answer came (refused, reset, timeout). */
  status: number;
  body: string;
  contentType: string;
  /** Why there was no answer (ECONNREFUSED, timeout after N ms, …). */
  error?: string;
  /** Nothing listens on the port (ECONNREFUSED). */
  refused?: boolean;
}

const MAX_PROBE_BODY = 4 * 1024 * 1024;

/**
 * One bounded request whose answer is read whole (health, discovery, metadata): a fresh connection
 * closed after it, the status and text returned, connection failures returned as text, never thrown.
 */
export async function fetchEngine(r: Omit<EngineHttpRequest, 'keepAlive'> & { maxBytes?: number }): Promise<GetResult> {
  let o: Opened;
  try {
    o = await openEngine({ accept: 'application/json, text/plain, */*', ...r, keepAlive: false });
  } catch (e) {
    const err = e as EngineHttpError;
    const error = err.statusCode === 504 ? `no answer within ${r.timeoutMs} ms` : err.statusCode === 499 ? 'cancelled' : (err.unreachable ?? err.message);
    return { status: 0, body: '', contentType: '', error, ...(err.unreachable === 'ECONNREFUSED' ? { refused: true } : {}) };
  }
  const status = o.res.statusCode ?? 0;
  const contentType = String(o.res.headers['content-type'] ?? '');
  try {
    return { status, body: await readBody(o.res, r.maxBytes ?? MAX_PROBE_BODY), contentType };
  } catch (e) {
    return { status: o.timedOut() ? 0 : status, body: '', contentType, error: o.timedOut() ? `no answer within ${r.timeoutMs} ms` : (e as Error).message };
  } finally {
    o.done();
    o.req.destroy(); // probes hit arbitrary services: never leave a socket behind
  }
}

/** The body as a JSON object (2xx answers only), or undefined. */
export function jsonObject(r: GetResult): Record<string, unknown> | undefined {
  if (r.status < 200 || r.status >= 300) return undefined;
  try {
    const v: unknown = parseJson(r.body, JSON_LIMITS.engine);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
