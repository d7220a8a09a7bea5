// The browser console's bridge: the same SwanBridge as the desktop preload, carried over a WebSocket to
// /bridge. Reconnects with backoff; calls made while disconnected wait for the socket (bounded), and
// calls in flight when it drops fail with a plain message.
// The socket proves it is this console's own page with the page secret (src/core/console/auth.ts): it
// arrives in the fragment of the sign-in redirect (`#swan-page=…`, which no server ever receives), is kept
// in this origin's localStorage (no other port's page can read it) and wiped from the address at once,
// and is sent only as a WebSocket subprotocol and in the /session check. The session cookie alone opens nothing.
import type { InvokeReply, SwanBridge } from '../../shared/bridge/transport';
import type { InvokeChannel, InvokeResults } from '../../shared/bridge/channels';
import type { InvokeArgs } from '../../shared/bridge/schemas';
import type { BridgeEvent } from '../../shared/bridge/events';
import type { ConnectionSource, ConnectionStatus } from './connection';
import { BridgeError, isBridgeErrorCode } from '../../shared/bridge-error';

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout>;
  sent: boolean;
  text: string;
}

/** Slow calls (loading a model) get longer than the rest. */
const TIMEOUT_MS: Partial<Record<InvokeChannel, number>> = { 'models.warmup': 10 * 60_000, 'engines.rescan': 2 * 60_000 };
const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_WAITING = 200;
/** Same names as src/core/console/auth.ts and server.ts. */
const BRIDGE_PROTOCOL = 'swan-bridge';
const PAGE_PROTOCOL_PREFIX = 'swan-page.';
const PAGE_HEADER = 'X-Swan-Page';
const PAGE_FRAGMENT_PREFIX = '#swan-page=';
const SIGNED_OUT = 4401;
const PAGE_KEY = 'swan-console-page';

function storedPage(): string | null {
  try {
    return window.localStorage.getItem(PAGE_KEY);
  } catch {
    return null;
  }
}

function storePage(secret: string | null): void {
  try {
    if (secret) window.localStorage.setItem(PAGE_KEY, secret);
    else window.localStorage.removeItem(PAGE_KEY);
  } catch {
    /* storage off: the secret lives as long as this page */
  }
}

/**
 * The page secret of a session begun just now: the sign-in redirect put it in this page's fragment. It is
 * taken out of the address at once (history, bookmarks and a shared screen keep nothing); null when the
 * address carries none.
 */
function takePageFromAddress(): string | null {
  const hash = window.location.hash;
  if (!hash.startsWith(PAGE_FRAGMENT_PREFIX)) return null;
  const secret = hash.slice(PAGE_FRAGMENT_PREFIX.length);
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.search}`);
  return /^[A-Za-z0-9_-]{16,128}$/.test(secret) ? secret : null;
}

export class WebSocketBridge implements SwanBridge, ConnectionSource {
  readonly transport = 'websocket' as const;
  status: ConnectionStatus = 'connecting';
  private ws: WebSocket | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly eventListeners = new Set<(events: BridgeEvent[]) => void>();
  private readonly statusListeners = new Set<(s: ConnectionStatus) => void>();
  private retryMs = 250;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private everOpened = false;
  /** This page's secret (claimed now, or kept from the same session in localStorage). */
  private page: string | null = null;
  private signedOut = false;

  constructor(
    private readonly url: string,
    private readonly sessionUrl: string,
  ) {
    this.start();
  }

  /** A page loaded right after the sign-in link takes its secret from its address; any other uses the one kept. */
  private start(): void {
    const fresh = takePageFromAddress();
    if (fresh) storePage(fresh);
    this.page = fresh ?? storedPage();
    this.connect();
  }

  invoke<C extends InvokeChannel>(channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]> {
    return new Promise<InvokeResults[C]>((resolve, reject) => {
      const waiting = [...this.pending.values()].filter((p) => !p.sent).length;
      if (waiting >= MAX_WAITING) {
        reject(new BridgeError('unavailable', 'The agent is not connected; try again when the console reconnects.'));
        return;
      }
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new BridgeError('unavailable', `The agent did not answer ${channel} in time.`));
      }, TIMEOUT_MS[channel] ?? DEFAULT_TIMEOUT_MS);
      const entry: Pending = { resolve: resolve as (v: unknown) => void, reject, timer, sent: false, text: JSON.stringify({ id, channel, args }) };
      this.pending.set(id, entry);
      this.trySend(entry);
    });
  }

  onEvents(cb: (events: BridgeEvent[]) => void): () => void {
    this.eventListeners.add(cb);
    return () => this.eventListeners.delete(cb);
  }

  onStatus(cb: (s: ConnectionStatus) => void): () => void {
    this.statusListeners.add(cb);
    return () => this.statusListeners.delete(cb);
  }

  private setStatus(s: ConnectionStatus): void {
    if (s === this.status) return;
    this.status = s;
    for (const l of this.statusListeners) l(s);
  }

  private trySend(p: Pending): void {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(p.text);
      p.sent = true;
    }
  }

  private connect(): void {
    // Another tab may have signed in since: its secret (and cookie) are the current ones.
    this.page = storedPage() ?? this.page;
    const ws = new WebSocket(this.url, this.page ? [BRIDGE_PROTOCOL, `${PAGE_PROTOCOL_PREFIX}${this.page}`] : [BRIDGE_PROTOCOL]);
    this.ws = ws;
    ws.onopen = () => {
      this.everOpened = true;
      this.signedOut = false;
      this.retryMs = 250;
      this.setStatus('open');
      for (const p of this.pending.values()) if (!p.sent) this.trySend(p);
    };
    ws.onmessage = (ev: MessageEvent) => this.receive(ev.data);
    ws.onclose = (ev: CloseEvent) => {
      if (this.ws !== ws) return;
      if (ev.code === SIGNED_OUT) this.signedOut = true;
      this.ws = null;
      for (const [id, p] of this.pending) {
        if (!p.sent) continue;
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.reject(new BridgeError('unavailable', 'Lost the connection to the agent before it answered; try again once reconnected.'));
      }
      void this.scheduleReconnect();
    };
  }

  private async scheduleReconnect(): Promise<void> {
    // A refused session looks like any failed socket to a browser; ask the server which it was.
    let unauthorized = this.signedOut;
    if (!unauthorized) {
      try {
        const res = await fetch(this.sessionUrl, { credentials: 'same-origin', cache: 'no-store', headers: this.page ? { [PAGE_HEADER]: this.page } : {} });
        unauthorized = res.status === 401;
      } catch {
        /* the agent is down: an ordinary reconnect */
      }
    }
    if (unauthorized && !this.signedOut) {
      // Another tab signed in since (a restarted agent, a new link): its secret is the current one.
      const kept = storedPage();
      if (kept && kept !== this.page) {
        this.page = kept;
        unauthorized = false;
      }
    }
    this.setStatus(unauthorized ? 'unauthorized' : this.everOpened ? 'reconnecting' : 'connecting');
    const delay = unauthorized ? 5000 : this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5000);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  private receive(data: unknown): void {
    if (typeof data !== 'string') return;
    let msg: { id?: unknown; reply?: InvokeReply<unknown>; events?: BridgeEvent[] };
    try {
      msg = JSON.parse(data) as typeof msg;
    } catch {
      return;
    }
    if (Array.isArray(msg.events)) {
      for (const l of this.eventListeners) l(msg.events);
      return;
    }
    if (typeof msg.id !== 'number' || !msg.reply) {
      if (msg.reply && !msg.reply.ok) console.warn(`console bridge: ${msg.reply.error}`);
      return;
    }
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    clearTimeout(p.timer);
    if (msg.reply.ok) p.resolve(msg.reply.value);
    else p.reject(new BridgeError(isBridgeErrorCode(msg.reply.code) ? msg.reply.code : 'failed', msg.reply.error, undefined, msg.reply.confirmation));
  }
}
