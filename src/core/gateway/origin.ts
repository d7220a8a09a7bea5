// Browser guard: a web page the owner did not allow must not drive the GPU through localhost.
// Browsers always send Origin on WebSocket handshakes and cross-origin POSTs; programs (curl, Python,
// the ws and openai packages) send none and are judged by their key alone. When bound to loopback, the
// Host header must name loopback too, which defeats DNS-rebinding pages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isLoopbackHost } from '../http/loopback';

function normalise(origin: string): string {
  if (origin === 'null') return 'null';
  try {
    return new URL(origin).origin;
  } catch {
    return origin.trim().replace(/\/+$/, '');
  }
}

/** Why a request was refused before its key was looked at (HTTP 403; the HTTP body's `code`). */
export type OriginRefusalCode = 'origin_not_allowed' | 'host_not_local';

export class OriginPolicy {
  private readonly allowed: Set<string>;

  constructor(
    allowedOrigins: string[],
    private readonly bindHost: string,
  ) {
    this.allowed = new Set(allowedOrigins.map(normalise));
  }

  /** undefined when allowed, else why to refuse (HTTP 403). */
  check(req: IncomingMessage): { code: OriginRefusalCode; message: string } | undefined {
    const origin = req.headers.origin;
    if (origin !== undefined && !this.allowed.has(normalise(origin))) {
      return {
        code: 'origin_not_allowed',
        message: `Origin ${origin} is not allowed to use this gateway. The owner can add it to [Gateway] AllowedOrigins in config.toml.`,
      };
    }
    if (isLoopbackHost(this.bindHost)) {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '');
      if (!isLoopbackHost(host))
        return { code: 'host_not_local', message: `Host "${req.headers.host ?? ''}" is not this machine; connect to 127.0.0.1 or localhost.` };
    }
    return undefined;
  }

  /** CORS headers for an allowed browser origin (none for non-browser requests). */
  cors(req: IncomingMessage, res: ServerResponse): void {
    const origin = req.headers.origin;
    if (origin === undefined) return;
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    res.setHeader('Access-Control-Allow-Headers', 'authorization, content-type');
    res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
    res.setHeader('Access-Control-Expose-Headers', 'retry-after, x-ratelimit-remaining-requests, x-ratelimit-limit-requests, x-request-id');
    res.setHeader('Access-Control-Max-Age', '600');
  }
}
