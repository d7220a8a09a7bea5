// A small hub stand-in on the real `ws` server, speaking what HUB-PROTOCOL.md says the real hub
// speaks: it acks register and heartbeat (AckPayload {request_id, success, message}), sends
// `inference` envelopes, and records every message the provider sent, in arrival order. Used where a
// test must know exactly what the hub was told (the crash test SIGKILLs the agent mid-burst).
import { EventEmitter } from 'node:events';
import { WebSocketServer, type WebSocket } from 'ws';

export interface ReceivedEnd {
  requestId: string;
  tokensIn?: number;
  tokensOut?: number;
  statusCode?: number;
  error?: string;
}

export class RecordingHub extends EventEmitter<{ end: [ReceivedEnd]; register: [string[]]; closed: [] }> {
  readonly ends: ReceivedEnd[] = [];
  readonly received: Array<{ type: string; request_id?: string; payload?: Record<string, unknown> }> = [];
  private socket?: WebSocket;
  private models: string[] = [];

  private constructor(
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {
    super();
    wss.on('connection', (ws) => {
      this.socket = ws;
      ws.on('message', (data) => this.onMessage(ws, data.toString('utf8')));
      ws.on('close', () => this.emit('closed'));
    });
  }

  static start(): Promise<RecordingHub> {
    return new Promise((resolve) => {
      const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
      wss.on('listening', () => {
        const addr = wss.address();
        resolve(new RecordingHub(wss, typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/ws`;
  }

  get connected(): boolean {
    return this.socket?.readyState === 1;
  }

  /** Resolves once a register announced `model`. */
  waitForModel(model: string, timeoutMs = 20_000): Promise<void> {
    if (this.connected && this.models.includes(model)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no register announced ${model} within ${timeoutMs} ms`)), timeoutMs);
      const on = (models: string[]): void => {
        if (!models.includes(model)) return;
        clearTimeout(timer);
        this.off('register', on);
        resolve();
      };
      this.on('register', on);
    });
  }

  /** Resolves when the provider's socket closes. */
  waitClosed(timeoutMs = 10_000): Promise<void> {
    if (!this.socket || this.socket.readyState === 3) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the provider socket did not close')), timeoutMs);
      this.once('closed', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  sendInference(requestId: string, model: string, request: Record<string, unknown>, stream = true): void {
    this.socket?.send(
      JSON.stringify({ type: 'inference', request_id: requestId, payload: { model_id: model, stream, request: { ...request, model, stream } } }),
    );
  }

  reset(): void {
    this.ends.length = 0;
    this.received.length = 0;
    this.models = [];
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((resolve) => this.wss.close(() => resolve()));
  }

  private onMessage(ws: WebSocket, text: string): void {
    let m: { type: string; request_id?: string; payload?: Record<string, unknown> };
    try {
      m = JSON.parse(text) as typeof m;
    } catch {
      return;
    }
    this.received.push(m);
    const ack = (): void =>
      ws.send(JSON.stringify({ type: 'ack', request_id: m.request_id ?? '', payload: { request_id: m.request_id ?? '', success: true, message: 'ok' } }));
    if (m.type === 'register') {
      ack();
      this.models = Array.isArray(m.payload?.models) ? (m.payload.models as string[]) : [];
      this.emit('register', this.models);
    } else if (m.type === 'heartbeat') ack();
    else if (m.type === 'stream_end' || (m.type === 'ack' && m.payload && 'response' in m.payload)) {
      const p = m.payload ?? {};
      const end: ReceivedEnd = {
        requestId: String(m.request_id ?? p.request_id ?? ''),
        ...(typeof p.tokens_input === 'number' ? { tokensIn: p.tokens_input } : {}),
        ...(typeof p.tokens_output === 'number' ? { tokensOut: p.tokens_output } : {}),
        ...(typeof p.status_code === 'number' ? { statusCode: p.status_code } : {}),
        ...(typeof p.error === 'string' ? { error: p.error } : {}),
      };
      this.ends.push(end);
      this.emit('end', end);
    }
  }
}
