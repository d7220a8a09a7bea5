// A small bounded GET for probes and health checks: no keep-alive (probes hit random ports),
// a hard timeout, a size cap, and connection errors returned as text instead of thrown.
import http from 'node:http';
import https from 'node:https';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

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

const MAX_BODY = 1024 * 1024;

export function httpGet(url: string, timeoutMs: number, headers: http.OutgoingHttpHeaders = {}): Promise<GetResult> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve({ status: 0, body: '', contentType: '', error: `not a valid URL: ${url}` });
    }
    const lib = u.protocol === 'https:' ? https : http;
    let done = false;
    const finish = (r: GetResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy(); // probes hit arbitrary services: never leave a socket behind
      resolve(r);
    };
    const req = lib.get(u, { agent: false, headers: { accept: 'application/json, text/plain, */*', ...headers } }, (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY) {
          req.destroy();
          finish({ status: res.statusCode ?? 0, body: '', contentType: '', error: `answer larger than ${MAX_BODY} bytes` });
        } else parts.push(c);
      });
      res.on('end', () =>
        finish({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), contentType: String(res.headers['content-type'] ?? '') }),
      );
      res.on('error', (e) => finish({ status: 0, body: '', contentType: '', error: e.message }));
    });
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, body: '', contentType: '', error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) =>
      finish({ status: 0, body: '', contentType: '', error: e.code ?? e.message, refused: e.code === 'ECONNREFUSED' }),
    );
  });
}

/** The body as a JSON object, or undefined. */
export function jsonObject(r: GetResult): Record<string, unknown> | undefined {
  if (r.status < 200 || r.status >= 300) return undefined;
  try {
    const v: unknown = parseJson(r.body, JSON_LIMITS.engine);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A small bounded JSON POST (the 1-token key check): the HTTP status, or 0 when no answer came. */
export function httpPost(url: string, body: unknown, timeoutMs: number, headers: http.OutgoingHttpHeaders = {}): Promise<number> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve(0);
    }
    const payload = Buffer.from(JSON.stringify(body));
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': payload.length, ...headers } }, (res) => {
      resolve(res.statusCode ?? 0);
      req.destroy(); // the status is all we need
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve(0);
    }, timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', () => resolve(0));
    req.end(payload);
  });
}
