// A stand-in of the real Swan Inference hub, written from ../shared/HUB-PROTOCOL.md (the Go
// computing-provider's side of the wire), NOT from our dev hub: the real `ws` server on 127.0.0.1,
// /ws on the WebSocket URL, acks typed as Go's AckPayload {request_id (no omitempty, so ""), success,
// message}, no resume-v1 extension, and GET /api/v1/provider/status for the key check. It records
// every frame the provider sends, with the time it arrived, and lets a test send hub -> provider
// messages (inference, cancel, unknown types) and drop the connection.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, WebSocket } from 'ws';

export interface Frame {
  at: number;
  type: string;
  /** The envelope's request_id (undefined when absent). */
  envelopeId?: string;
  payload: Record<string, unknown>;
  raw: string;
}

export interface GoHubOptions {
  /** The provider key the hub accepts. */
  token: string;
  /** Extensions in the register ack (the real hub sends none). */
  extensions?: string[];
  /** v0.5 register-ack fields for a register (registered_models, upgrade_available), as the hub computes them. */
  registerAck?: (register: Frame) => Record<string, unknown>;
  /** Frames the hub sends before its first successful register ack on a connection (a failed ack, an error). */
  beforeFirstAck?: unknown[];
}

export class GoHub extends EventEmitter {
  readonly frames: Frame[] = [];
  /** Switches a test may flip: answer register / heartbeats with an ack or not. */
  readonly behaviour = { ackRegister: true, ackHeartbeats: true };
  /** Connections accepted so far (each dial is one). */
  connections = 0;
  private ws?: WebSocket;
  private readonly server: http.Server;
  private readonly wss: WebSocketServer;
  port = 0;

  constructor(private readonly opts: GoHubOptions) {
    super();
    this.setMaxListeners(0);
    this.wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
    this.server = http.createServer((req, res) => this.http(req, res));
    this.server.on('upgrade', (req, socket, head) => {
      if (new URL(req.url ?? '/', 'http://x').pathname !== '/ws') {
        socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** WebSocketURL as config.toml holds it (the provider appends /ws). */
  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  get connected(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  send(msg: unknown): void {
    this.sendRaw(JSON.stringify(msg));
  }

  sendRaw(text: string): void {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) throw new Error('no provider connected');
    this.ws.send(text);
  }

  /**
   * Sends the messages in one TCP write (the socket corked for the tick), so the provider reads them
   * together, as it does a burst behind a slow link.
   */
  sendTogether(msgs: unknown[]): void {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) throw new Error('no provider connected');
    // ws keeps its net.Socket private; corking it is the only way to put several frames in one write.
    const socket = (this.ws as unknown as { _socket: import('node:net').Socket })._socket;
    socket.cork();
    for (const m of msgs) this.ws.send(JSON.stringify(m));
    process.nextTick(() => socket.uncork());
  }

  /** Go InferencePayload {endpoint_id, model_id, request, stream}, request_id in the envelope. */
  inference(requestId: string, model: string, request: Record<string, unknown>, stream: boolean): void {
    this.send({ type: 'inference', request_id: requestId, payload: { endpoint_id: `ep-${requestId}`, model_id: model, request, stream } });
  }

  /** Go CancelPayload {request_id, reason}. */
  cancel(requestId: string, reason: string): void {
    this.send({ type: 'cancel', request_id: requestId, payload: { request_id: requestId, reason } });
  }

  /** Kills the TCP connection, as a hub restart or a network cut does. */
  drop(): void {
    this.ws?.terminate();
  }

  of(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }

  /** Frames whose payload names this request. */
  forRequest(id: string): Frame[] {
    return this.frames.filter((f) => f.payload.request_id === id || f.envelopeId === id);
  }

  /** Resolves with the first frame (from index `from`) that matches; rejects after the deadline. */
  waitFor(match: (f: Frame) => boolean, what: string, timeoutMs = 10_000, from = 0): Promise<Frame> {
    const found = this.frames.slice(from).find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('frame', check);
        reject(new Error(`timed out waiting for: ${what}`));
      }, timeoutMs);
      const check = (f: Frame): void => {
        if (!match(f)) return;
        clearTimeout(timer);
        this.off('frame', check);
        resolve(f);
      };
      this.on('frame', check);
    });
  }

  private accept(ws: WebSocket): void {
    this.connections++;
    ws.on('error', () => {});
    // A connection is the provider's once it registers with the key, as on the real hub: a dial that never
    // registers (doctor's reachability check) neither replaces the provider's link nor counts as its close.
    ws.on('close', () => {
      if (ws === this.ws) this.emit('close');
    });
    ws.on('message', (data) => {
      const raw = data.toString();
      let msg: { type?: unknown; request_id?: unknown; payload?: unknown };
      try {
        msg = JSON.parse(raw) as typeof msg;
      } catch {
        return;
      }
      const frame: Frame = {
        at: Date.now(),
        type: String(msg.type),
        ...(typeof msg.request_id === 'string' ? { envelopeId: msg.request_id } : {}),
        payload: (msg.payload && typeof msg.payload === 'object' ? msg.payload : {}) as Record<string, unknown>,
        raw,
      };
      this.frames.push(frame);
      if (frame.type === 'register') {
        if (frame.payload.token === this.opts.token && ws !== this.ws) {
          this.ws?.terminate();
          this.ws = ws;
        }
        if (frame.payload.token !== this.opts.token) {
          ws.send(JSON.stringify({ type: 'error', payload: { code: 401, message: 'invalid provider API key' } }));
          ws.close();
        } else if (this.behaviour.ackRegister) {
          if (!acked.has(ws)) for (const m of this.opts.beforeFirstAck ?? []) ws.send(JSON.stringify(m));
          acked.add(ws);
          // Go's AckPayload with its request_id left unset: "request_id": "".
          ws.send(
            JSON.stringify({
              type: 'ack',
              payload: {
                request_id: '',
                success: true,
                message: 'Registration successful',
                ...(this.opts.extensions ? { extensions: this.opts.extensions } : {}),
                ...(this.opts.registerAck?.(frame) ?? {}),
              },
            }),
          );
        }
      } else if (frame.type === 'heartbeat' && this.behaviour.ackHeartbeats) {
        ws.send(JSON.stringify({ type: 'ack', payload: { request_id: '', success: true } }));
      }
      this.emit('frame', frame);
    });
  }

  private http(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    const reply = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    if (req.method === 'GET' && url.pathname === '/api/v1/provider/status') {
      const ok = req.headers.authorization === `Bearer ${this.opts.token}`;
      return reply(ok ? 200 : 401, {
        provider_id: ok ? 'prov-1' : '',
        name: 'conformance',
        status: ok ? 'active' : 'unknown',
        can_connect: ok,
        api_key_valid: ok,
        message: ok ? 'Provider is active' : 'Invalid API key',
        next_steps: [],
        step: 4,
        total_steps: 4,
        step_label: 'Active',
        earnings_enabled: false,
      });
    }
    reply(404, { code: 404, message: 'not found' });
  }
}

const acked = new WeakSet<WebSocket>();

export async function startGoHub(opts: GoHubOptions): Promise<GoHub> {
  const hub = new GoHub(opts);
  await hub.listen();
  return hub;
}
