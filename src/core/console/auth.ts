// Access control of the browser console, as Jupyter does it: a random token printed at start, accepted
// once as `?token=` (or as an `Authorization: Bearer` header, for scrapers), then kept in an HttpOnly,
// SameSite=Strict cookie. WebSocket upgrades must also come from a page of this same host (Origin check).
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export function newToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** Cookies are shared by every port of a host, so the name carries the port (two consoles never clash). */
export function cookieName(port: number): string {
  return `swan_console_${port}`;
}

export function sessionCookie(port: number, token: string): string {
  return `${cookieName(port)}=${token}; Path=/; HttpOnly; SameSite=Strict`;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export type TokenSource = 'query' | 'header' | 'cookie';

/** Which credential proved the token (or null when none did). */
export function checkToken(req: IncomingMessage, url: URL, token: string, port: number): TokenSource | null {
  const q = url.searchParams.get('token');
  if (q !== null && sameSecret(q, token)) return 'query';
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7).trim(), token)) return 'header';
  const c = readCookie(req.headers.cookie, cookieName(port));
  if (c !== undefined && sameSecret(c, token)) return 'cookie';
  return null;
}

/**
 * The Host header must name this server (a loopback name or the address it listens on), which stops
 * DNS-rebinding pages; for WebSockets the Origin must be that same host.
 */
export function hostAllowed(req: IncomingMessage, listenHost: string, port: number): boolean {
  const host = req.headers.host;
  if (!host) return false;
  const allowed = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  if (listenHost !== '0.0.0.0' && listenHost !== '::') allowed.add(`${listenHost.includes(':') ? `[${listenHost}]` : listenHost}:${port}`);
  // Bound to every interface: the owner opted into LAN access, so any host name at our port is ours.
  if (listenHost === '0.0.0.0' || listenHost === '::') return host.endsWith(`:${port}`);
  return allowed.has(host.toLowerCase());
}

export function originAllowed(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (!origin || !host) return false;
  try {
    const o = new URL(origin);
    return (o.protocol === 'http:' || o.protocol === 'https:') && o.host === host.toLowerCase();
  } catch {
    return false;
  }
}
