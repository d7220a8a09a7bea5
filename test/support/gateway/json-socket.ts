// A real `ws` client that keeps every JSON message it receives and lets a test await the next one that
// matches, with a deadline (the failure says what did arrive).
import WebSocket, { type ClientOptions } from 'ws';

export type Msg = Record<string, unknown>;

interface Waiter {
  pred: (m: Msg) => boolean;
  resolve: (m: Msg) => void;
}

export class JsonSocket {
  readonly messages: Msg[] = [];
  /** Messages a waitFor() already returned (each is returned once). */
  private readonly consumed = new Set<number>();
  private waiters: Waiter[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Called for every message as it arrives (before waiters). */
  onMessage?: (m: Msg) => void;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data) => {
      const m = JSON.parse(data.toString()) as Msg;
      this.messages.push(m);
      this.onMessage?.(m);
      this.flush();
    });
  }

  static open(url: string, protocols?: string | string[], opts?: ClientOptions): Promise<JsonSocket> {
    const ws = new WebSocket(url, protocols, opts);
    const s = new JsonSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(s));
      ws.once('error', reject);
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode, body })));
      });
    });
  }

  send(m: unknown): void {
    this.ws.send(typeof m === 'string' ? m : JSON.stringify(m));
  }

  /** The oldest matching message no earlier waitFor() returned, or the next one to arrive. */
  waitFor(pred: (m: Msg) => boolean, timeoutMs = 5000): Promise<Msg> {
    const found = this.take(pred);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        pred,
        resolve: (m) => {
          clearTimeout(t);
          resolve(m);
        },
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        const tail = this.messages.slice(-5).map((m) => JSON.stringify(m).slice(0, 200));
        reject(new Error(`no matching message within ${timeoutMs} ms; last received:\n${tail.join('\n')}`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  type(type: string, timeoutMs?: number): Promise<Msg> {
    return this.waitFor((m) => m.type === type, timeoutMs);
  }

  close(): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close();
    return this.closed;
  }

  private take(pred: (m: Msg) => boolean): Msg | undefined {
    for (let i = 0; i < this.messages.length; i++) {
      if (this.consumed.has(i)) continue;
      const m = this.messages[i] as Msg;
      if (pred(m)) {
        this.consumed.add(i);
        return m;
      }
    }
    return undefined;
  }

  private flush(): void {
    for (const w of [...this.waiters]) {
      const m = this.take(w.pred);
      if (m) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(m);
      }
    }
  }
}
