// Who is calling: the API key from the query (?api_key= / ?apiKey=), an `Authorization: Bearer` header,
// or the WebSocket subprotocol pair ['access_token', KEY]. Whether a caller is on this machine (seed 002's
// websocket_auth: false) is http/loopback.ts's question.
import type { IncomingMessage } from 'node:http';

/**
 * Why a gateway key was refused, the same on every dialect (stream-v1 and /v1/ws `reason`, the HTTP
 * error body's `code`): none presented, one this gateway does not know (never created, or revoked
 * before this connection), or one revoked while its connection or request was running.
 */
export type KeyRefusalCode = 'key_missing' | 'key_unknown' | 'key_revoked';

/** `key_missing` when no key was presented, else `key_unknown`. */
export function keyRefusalCode(key: string | undefined): KeyRefusalCode {
  return key === undefined || key === '' ? 'key_missing' : 'key_unknown';
}

/** The Sec-WebSocket-Protocol values the client offered, in its order. */
export function offeredProtocols(req: IncomingMessage): string[] {
  const raw = req.headers['sec-websocket-protocol'];
  if (!raw) return [];
  return (Array.isArray(raw) ? raw.join(',') : raw)
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The key the request carries, if any (first found: query, bearer header, subprotocol). */
export function presentedKey(req: IncomingMessage, url: URL): string | undefined {
  const q = url.searchParams.get('api_key') ?? url.searchParams.get('apiKey');
  if (q) return q;
  const auth = req.headers.authorization;
  const m = typeof auth === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  if (m?.[1]) return m[1];
  const protos = offeredProtocols(req);
  const i = protos.indexOf('access_token');
  if (i >= 0 && protos[i + 1]) return protos[i + 1];
  return undefined;
}
