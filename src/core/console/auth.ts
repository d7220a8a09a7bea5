// Access control of the browser console. Four credentials, each for one thing:
// - the console token (random per start, or stable from a token file): a program's credential
//   (`Authorization: Bearer` or `?token=` for /metrics and the bridge), and a bookmark a browser can
//   exchange for a session any number of times;
// - one-time codes (`?code=`): what `swan-provider run` prints; each opens one browser session once
//   and expires unused after CODE_TTL_MS, so the printed link in a terminal's scrollback, a journal or
//   the browser's history is worth nothing afterwards;
// - the session cookie: a random id in an HttpOnly, SameSite=Strict cookie named by port. It loads the
//   console's pages and nothing more. Browsers send cookies to every port of a host (and SameSite counts
//   127.0.0.1:8000 as the same site as 127.0.0.1:7777), so any other local web server the owner visits
//   receives it: a cookie alone must never open the bridge;
// - the page secret: made with the session in the same exchange and carried in the fragment of that
//   exchange's redirect (`#swan-page=…`). A browser never sends a fragment to any server, so only the
//   console's own page (which reads it from its address, keeps it in its origin's localStorage and wipes
//   it from the address) ever holds it. There is nothing to claim afterwards: an earlier design handed it
//   to the first POST that carried the cookie, and a server on another loopback port that received the
//   cookie at sign-in won that race. It travels only in the bridge's WebSocket handshake (a
//   subprotocol) and the page's /session check, never by itself. The bridge needs cookie + page secret +
//   this console's Origin; whoever holds only the cookie holds nothing that changes anything (Jupyter's
//   rule: a cookie authenticates, a value the page must read proves the page).
// Sessions expire (idle SESSION_IDLE_MS, at most SESSION_MAX_MS) and end with the agent; the owner lists
// them and signs out everywhere from Settings.
import crypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import os from 'node:os';
import type { ConsoleSessionView } from '../../shared/views/settings';

export function newToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}

/** A one-time code opens one session, once, within this long of being issued. */
export const CODE_TTL_MS = 15 * 60_000;
/** Sessions unused this long end. */
export const SESSION_IDLE_MS = 24 * 3600_000;
/** No session lives longer than this: then a new link, or the bookmark, opens a new one. */
export const SESSION_MAX_MS = 7 * 24 * 3600_000;
const MAX_SESSIONS = 64;
const MAX_CODES = 64;

/** The WebSocket subprotocol the console's page offers and the server picks. */
export const BRIDGE_PROTOCOL = 'swan-bridge';
/** The subprotocol that carries the page secret (`swan-page.<secret>`: base64url is a valid token). */
export const PAGE_PROTOCOL_PREFIX = 'swan-page.';
/** The header the page's /session check carries. */
export const PAGE_HEADER = 'x-swan-page';
/** The sign-in redirect's fragment that carries the page secret to the console's own page, and only there. */
export const PAGE_FRAGMENT_PREFIX = 'swan-page=';

/** Cookies are shared by every port of a host, so the name carries the port (two consoles never clash). */
export function cookieName(port: number): string {
  return `swan_session_${port}`;
}

export function sessionCookie(port: number, sessionId: string): string {
  return `${cookieName(port)}=${sessionId}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(SESSION_MAX_MS / 1000)}`;
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

/** The page secret a WebSocket handshake offers as a subprotocol, if any. */
export function offeredPageSecret(req: IncomingMessage): string | undefined {
  const raw = req.headers['sec-websocket-protocol'];
  for (const p of (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',')) {
    const t = p.trim();
    if (t.startsWith(PAGE_PROTOCOL_PREFIX)) return t.slice(PAGE_PROTOCOL_PREFIX.length);
  }
  return undefined;
}

/** How a request proved itself: a token in the query or header, a one-time code, or a session cookie. */
export type Credential = 'token-query' | 'token-header' | 'code' | 'cookie';

interface Session {
  publicId: string;
  pageDigest: string;
  createdAt: number;
  lastUsedAt: number;
  userAgent: string;
  address: string;
}

function shortAgent(ua: string | undefined): string {
  return (ua ?? '').replace(/[^\x20-\x7e]/g, '').slice(0, 160) || 'unknown browser';
}

export class ConsoleAuth {
  /** code digest -> expiry (ms). Codes and sessions are kept as digests: a heap dump holds no usable value. */
  private readonly codes = new Map<string, number>();
  /** session-cookie digest -> session */
  private readonly sessions = new Map<string, Session>();
  /** Called with the public ids of sessions that ended (signed out, expired): their sockets close. */
  onEnded?: (publicIds: string[]) => void;

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

  /**
   * Starts a browser session: `id` goes only into the Set-Cookie header, `page` only into the fragment of
   * the same redirect (which no server ever receives). Both exist only in that one answer.
   */
  newSession(req: IncomingMessage): { id: string; page: string } {
    this.sweep();
    const t = this.now();
    while (this.sessions.size >= MAX_SESSIONS) {
      const oldest = [...this.sessions.entries()].sort((a, b) => a[1].lastUsedAt - b[1].lastUsedAt)[0]!;
      this.drop([oldest[0]]);
    }
    const id = crypto.randomBytes(32).toString('base64url');
    const page = crypto.randomBytes(32).toString('base64url');
    this.sessions.set(digest(id), {
      publicId: crypto.randomBytes(6).toString('hex'),
      pageDigest: digest(page),
      createdAt: t,
      lastUsedAt: t,
      userAgent: shortAgent(req.headers['user-agent']),
      address: req.socket?.remoteAddress ?? '',
    });
    return { id, page };
  }

  /** Which credential the request carries (a code is used up by this call), or null when none is valid. */
  check(req: IncomingMessage, url: URL, opts: { acceptCode: boolean }): Credential | null {
    const q = url.searchParams.get('token');
    if (q !== null && sameSecret(q, this.token)) return 'token-query';
    const auth = req.headers.authorization;
    if (auth?.startsWith('Bearer ') && sameSecret(auth.slice(7).trim(), this.token)) return 'token-header';
    const code = url.searchParams.get('code');
    if (opts.acceptCode && code !== null && this.useCode(code)) return 'code';
    if (this.cookieSession(req)) return 'cookie';
    return null;
  }

  /** The public id of the session whose cookie and page secret the request carries together, or undefined. */
  pageSession(req: IncomingMessage, pageSecret: string | undefined): string | undefined {
    if (!pageSecret) return undefined;
    const s = this.cookieSession(req);
    if (!s || !sameSecret(digest(pageSecret), s.pageDigest)) return undefined;
    return s.publicId;
  }

  /** Whether a session (by public id) is still open: sockets are closed when it is not. */
  isOpen(publicId: string): boolean {
    this.sweep();
    for (const s of this.sessions.values()) if (s.publicId === publicId) return true;
    return false;
  }

  /** The open sessions, newest first; `current` marks the asking page's. */
  list(current?: string): ConsoleSessionView[] {
    this.sweep();
    return [...this.sessions.values()]
      .map((s) => ({
        id: s.publicId,
        createdAt: s.createdAt,
        lastUsedAt: s.lastUsedAt,
        expiresAt: Math.min(s.lastUsedAt + SESSION_IDLE_MS, s.createdAt + SESSION_MAX_MS),
        userAgent: s.userAgent,
        address: s.address,
        current: s.publicId === current,
      }))
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Ends one session by public id, or every one (sign out everywhere). Returns how many ended. */
  end(publicId?: string): number {
    const ended = [...this.sessions.entries()].filter(([, s]) => publicId === undefined || s.publicId === publicId).map(([d]) => d);
    this.drop(ended);
    return ended.length;
  }

  private drop(digests: string[]): void {
    const ids: string[] = [];
    for (const d of digests) {
      const s = this.sessions.get(d);
      if (!s) continue;
      this.sessions.delete(d);
      ids.push(s.publicId);
    }
    if (ids.length) this.onEnded?.(ids);
  }

  private sweep(): void {
    const t = this.now();
    this.drop([...this.sessions.entries()].filter(([, s]) => t - s.lastUsedAt > SESSION_IDLE_MS || t - s.createdAt > SESSION_MAX_MS).map(([d]) => d));
  }

  private useCode(code: string): boolean {
    const d = digest(code);
    const exp = this.codes.get(d);
    if (exp === undefined) return false;
    this.codes.delete(d);
    return exp > this.now();
  }

  private cookieSession(req: IncomingMessage): Session | undefined {
    const c = readCookie(req.headers.cookie, cookieName(this.port()));
    if (c === undefined) return undefined;
    this.sweep();
    const s = this.sessions.get(digest(c));
    if (s) s.lastUsedAt = this.now();
    return s;
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
