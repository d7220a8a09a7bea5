// A hostile hub stand-in on the real `ws` server: it registers the provider as the real hub does (acks
// register and heartbeat, HUB-PROTOCOL.md), and besides sends anything at all — raw text frames of any
// size, depth and rate. It records what the provider sent, and can run an ordinary inference to check
// that the provider still serves.
import { WebSocketServer, type WebSocket } from 'ws';

export interface HubFrame {
  type: string;
  request_id?: string;
  payload?: Record<string, unknown>;
}

export class HostileHub {
  /** Every frame the provider sent, in order. */
  readonly frames: HubFrame[] = [];
  /** Raw texts of every frame the provider sent (to look for secrets). */
  readonly texts: string[] = [];
  registers = 0;
  /** Connections that registered: a re-register on the same socket (a model withdrawn, say) does not count. */
  registeredConnections = 0;
  private socket?: WebSocket;
  private registeredOn?: WebSocket;
  private readonly waiters = new Set<() => void>();

  private constructor(
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {
    wss.on('connection', (ws) => {
      this.socket = ws;
      ws.on('message', (data) => this.onMessage(ws, data.toString('utf8')));
      ws.on('error', () => undefined);
    });
  }

  static start(): Promise<HostileHub> {
    return new Promise((resolve) => {
      // The hub's own read limit: the provider's answers are never over 1 MB.
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 4 * 1024 * 1024 });
      wss.on('listening', () => resolve(new HostileHub(wss, (wss.address() as { port: number }).port)));
    });
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/ws`;
  }

  /** A provider socket is open and has registered on it. */
  get connected(): boolean {
    return this.socket?.readyState === 1 && this.registeredOn === this.socket;
  }

  /** Sends raw text as one frame (nothing checks it). Resolves once the socket took it. */
  sendRaw(text: string | Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== 1) return reject(new Error('no provider connected'));
      this.socket.send(text, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** An ordinary inference; resolves with its last message (stream_end, or the result ack) and the chunks before it. */
  async inference(requestId: string, model: string, stream: boolean, timeoutMs = 15_000): Promise<{ end: HubFrame; chunks: HubFrame[] }> {
    const from = this.frames.length;
    const request = { model, stream, max_tokens: 8, messages: [{ role: 'user', content: 'hello' }] };
    await this.sendRaw(JSON.stringify({ type: 'inference', request_id: requestId, payload: { request_id: requestId, model_id: model, stream, request } }));
    const end = await this.waitFor(
      (f) => f.request_id === requestId && (f.type === 'stream_end' || (f.type === 'ack' && f.payload !== undefined && 'response' in f.payload)),
      `the end of ${requestId}`,
      timeoutMs,
      from,
    );
    const chunks = this.frames.slice(from).filter((f) => f.request_id === requestId && f.type === 'stream_chunk');
    return { end, chunks };
  }

  /** Resolves with the first frame (from index `from`) that matches. */
  waitFor(match: (f: HubFrame) => boolean, what: string, timeoutMs = 15_000, from = 0): Promise<HubFrame> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const f = this.frames.slice(from).find(match);
        if (!f) return false;
        this.waiters.delete(check as () => void);
        clearTimeout(timer);
        resolve(f);
        return true;
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check as () => void);
        reject(new Error(`hostile hub: no ${what} within ${timeoutMs} ms`));
      }, timeoutMs);
      if (!check()) this.waiters.add(check as () => void);
    });
  }

  /** Resolves once a provider is connected and registered (again). */
  async registered(timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.connected) {
      if (Date.now() > deadline) throw new Error('hostile hub: the provider did not register');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private onMessage(ws: WebSocket, text: string): void {
    let m: HubFrame;
    try {
      m = JSON.parse(text) as HubFrame;
    } catch {
      return;
    }
    this.texts.push(text);
    this.frames.push(m);
    const ack = (): void =>
      ws.send(JSON.stringify({ type: 'ack', request_id: m.request_id ?? '', payload: { request_id: m.request_id ?? '', success: true, message: 'ok' } }));
    if (m.type === 'register') {
      this.registers++;
      if (this.registeredOn !== ws) this.registeredConnections++;
      this.registeredOn = ws;
      ack();
    } else if (m.type === 'heartbeat') ack();
    for (const w of [...this.waiters]) w();
  }
}
