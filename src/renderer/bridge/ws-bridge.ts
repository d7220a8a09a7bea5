// The browser console's bridge: the same SwanBridge as the desktop preload, carried over a WebSocket to
// /bridge. Reconnects with backoff; calls made while disconnected wait for the socket (bounded), and
// calls in flight when it drops fail with a plain message.
import type { BridgeEvent, InvokeArgs, InvokeChannel, InvokeReply, InvokeResults, SwanBridge } from '../../shared/bridge';
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

  constructor(
    private readonly url: string,
    private readonly sessionUrl: string,
  ) {
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
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.onopen = () => {
      this.everOpened = true;
      this.retryMs = 250;
      this.setStatus('open');
      for (const p of this.pending.values()) if (!p.sent) this.trySend(p);
    };
    ws.onmessage = (ev: MessageEvent) => this.receive(ev.data);
    ws.onclose = () => {
      if (this.ws !== ws) return;
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
    // A refused token looks like any failed socket to a browser; ask the server which it was.
    let unauthorized = false;
    try {
      const res = await fetch(this.sessionUrl, { credentials: 'same-origin', cache: 'no-store' });
      unauthorized = res.status === 401;
    } catch {
      /* the agent is down: an ordinary reconnect */
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
