// Access control of the browser console. Three credentials, each for one thing:
// - the console token (random per start, or stable from a token file): a program's credential
//   (`Authorization: Bearer` or `?token=` for /metrics and the bridge), and a bookmark a browser can
//   exchange for a session any number of times;
// - one-time codes (`?code=`): what `swan-provider run` prints; each opens one browser session once
//   and expires unused after CODE_TTL_MS, so the printed link in a terminal's scrollback, a journal or
//   the browser's history is worth nothing afterwards;
// - the session id: a random value in an HttpOnly, SameSite=Strict cookie named by port. It is not the
//   token and works only as that cookie (never as ?token= or Bearer), and only until the agent stops.
// WebSocket upgrades must also come from a page of this same host (Origin check).
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';

export function newToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** A one-time code opens one session, once, within this long of being issued. */
export const CODE_TTL_MS = 15 * 60_000;
/** Sessions unused this long are forgotten. */
export const SESSION_IDLE_MS = 7 * 24 * 3600_000;
const MAX_SESSIONS = 256;
const MAX_CODES = 64;

/** Cookies are shared by every port of a host, so the name carries the port (two consoles never clash). */
export function cookieName(port: number): string {
  return `swan_session_${port}`;
}

export function sessionCookie(port: number, sessionId: string): string {
  return `${cookieName(port)}=${sessionId}; Path=/; HttpOnly; SameSite=Strict`;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

function digest(s: string): string {
  return crypto.createHash('sha256').update(s).digest('hex');
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** How a request proved itself: a token in the query or header, a one-time code, or a session cookie. */
export type Credential = 'token-query' | 'token-header' | 'code' | 'cookie';

export class ConsoleAuth {
  /** code digest -> expiry (ms). Codes and sessions are kept as digests: a heap dump holds no usable value. */
  private readonly codes = new Map<string, number>();
  /** session digest -> last use (ms) */
  private readonly sessions = new Map<string, number>();

  constructor(
    readonly token: string,
    private readonly port: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new one-time code for a link (`/?code=…`). */
  newCode(): string {
    const t = this.now();
    for (const [c, exp] of this.codes) if (exp <= t) this.codes.delete(c);
    while (this.codes.size >= MAX_CODES) this.codes.delete(this.codes.keys().next().value as string);
    const code = crypto.randomBytes(18).toString('base64url');
    this.codes.set(digest(code), t + CODE_TTL_MS);
    return code;
  }

  /** Starts a browser session; the value goes only into the Set-Cookie header. */
  newSession(): string {
    const t = this.now();
    for (const [s, last] of this.sessions) if (t - last > SESSION_IDLE_MS) this.sessions.delete(s);
    while (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    const id = crypto.randomBytes(32).toString('base64url');
    this.sessions.set(digest(id), t);
    return id;
  }

  /** Which credential the request carries (a code is used up by this call), or null when none is valid. */
  check(req: IncomingMessage, url: URL, opts: { acceptCode: boolean }): Credential | null {
    const q = url.searchParams.get('token');
    if (q !== null && sameSecret(q, this.token)) return 'token-query';
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7).trim(), this.token)) return 'token-header';
    const code = url.searchParams.get('code');
    if (opts.acceptCode && code !== null && this.useCode(code)) return 'code';
    const c = readCookie(req.headers.cookie, cookieName(this.port()));
    if (c !== undefined && this.validSession(c)) return 'cookie';
    return null;
  }

  private useCode(code: string): boolean {
    const d = digest(code);
    const exp = this.codes.get(d);
    if (exp === undefined) return false;
    this.codes.delete(d);
    return exp > this.now();
  }

  private validSession(id: string): boolean {
    const d = digest(id);
    const last = this.sessions.get(d);
    if (last === undefined) return false;
    const t = this.now();
    if (t - last > SESSION_IDLE_MS) {
      this.sessions.delete(d);
      return false;
    }
    this.sessions.set(d, t);
    return true;
  }
}

export function isLoopbackListen(listenHost: string): boolean {
  const h = listenHost.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function isWildcard(listenHost: string): boolean {
  return listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '[::]';
}

function bracket(h: string): string {
  return h.includes(':') && !h.startsWith('[') ? `[${h}]` : h;
}

/**
 * The Host header values this console answers to: loopback names, the address it listens on, and — when
 * it listens on every interface — this machine's own addresses and host name, plus names the owner
 * lists. Anything else (a DNS-rebinding page's name) is refused, whatever the bind address.
 */
export function allowedHosts(listenHost: string, port: number, extraNames: string[] = []): Set<string> {
  const names = new Set<string>(['127.0.0.1', 'localhost', '[::1]']);
  if (!isWildcard(listenHost)) names.add(bracket(listenHost.toLowerCase()));
  else {
    for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) names.add(bracket(a.address.toLowerCase().replace(/%.*$/, '')));
    const hn = os.hostname().toLowerCase();
    if (hn) names.add(hn).add(`${hn}.local`);
  }
  for (const n of extraNames) if (n.trim()) names.add(bracket(n.trim().toLowerCase()));
  return new Set([...names].map((n) => `${n}:${port}`));
}

export function hostAllowed(req: IncomingMessage, allowed: Set<string>): boolean {
  const host = req.headers.host;
  return typeof host === 'string' && allowed.has(host.toLowerCase());
}

/** The warning printed and shown when the console is reachable from other machines, or undefined on loopback. */
export function exposureWarning(listenHost: string, port: number): string | undefined {
  if (isLoopbackListen(listenHost)) return undefined;
  return `The console listens on ${bracket(listenHost)}:${port}: other machines on your network can reach it over plain HTTP (not encrypted). Anyone who can watch that network can read the console's traffic. Prefer 127.0.0.1 with an SSH tunnel, or use it only on a network you trust.`;
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
