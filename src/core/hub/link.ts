// HubLink: the one persistent WebSocket to Swan Inference.
// One loop owns the connection: dial -> register -> serve -> (close) -> backoff -> dial … so there is
// never more than one socket or one reconnect in flight (the Go provider's zombie and double-reconnect
// bugs cannot happen by construction). Control messages (register, heartbeat, acks, errors) go out at
// once; data (stream chunks) goes through a bounded lane whose writers wait while the socket is backed up.
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import WebSocket from 'ws';
import type { LinkReasonCode, LinkState, LinkStatus } from '../../shared/types';
import type { Logger } from '../log';
import { dispatch, sessionTable, type InboundTable, type LinkSession } from './dispatch';
import {
  encodeOnce,
  InboundError,
  MAX_MESSAGE_BYTES,
  out,
  RESUME_EXTENSION,
  parseInbound,
  type AckPayload,
  type Health,
  type HeartbeatPayload,
  type Inbound,
  type EncodedMessage,
  type Outbound,
  type RegisterPayload,
} from '../protocol/messages';

export interface LinkTimings {
  heartbeatIntervalMs: number;
  pingIntervalMs: number;
  readTimeoutMs: number;
  reconnectMaxBackoffMs: number;
  authFailedBackoffMs: number;
  /** WebSocket handshake (Go dialer: 10 s). */
  handshakeTimeoutMs?: number;
  /** A write the socket has not taken within this ends the connection (Go writeWait: 10 s). */
  writeTimeoutMs?: number;
}

/** Go's dialer HandshakeTimeout and writeWait (inference_client.go). */
export const HANDSHAKE_TIMEOUT_MS = 10_000;
export const WRITE_TIMEOUT_MS = 10_000;

/** Reconnect delay after `n` failed dials in a row: 0 (immediate), then 1, 2, 4 … s up to the cap (Go). */
export function reconnectDelayMs(n: number, maxMs: number): number {
  if (n <= 0) return 0;
  return Math.min(maxMs, 1000 * 2 ** Math.min(n - 1, 16));
}

export interface HubLinkOptions {
  url: string;
  nodeId: string;
  log: Logger;
  timings: LinkTimings;
  register: () => RegisterPayload;
  heartbeat: () => HeartbeatPayload;
  modelHealth: () => Record<string, Health>;
  /** Bytes the data lane may have in flight on the socket before writers wait. */
  dataHighWaterBytes?: number;
  /** The routing table of one connection (dispatch.ts hubTable); default: session frames only. */
  dispatch?: (session: LinkSession) => InboundTable;
}

/** A register ack as the hub sent it (the hub's view of this node rides on it: registered_models, upgrade_available). */
export type RegisterAck = AckPayload;

export interface HubLinkEvents {
  state: [LinkStatus];
  registered: [];
  /** Every successful ack of a register (the first and each re-register), before `registered`. */
  registerAck: [RegisterAck];
  disconnected: [string, LinkReasonCode];
}

const MISSED_HEARTBEATS_LIMIT = 3;
/** Distinct unknown message types remembered for "logged once per type". */
const UNKNOWN_TYPES_REMEMBERED = 64;

export class HubLink extends EventEmitter<HubLinkEvents> {
  private ws?: WebSocket;
  private stopped = true;
  private loop?: Promise<void>;
  private wakeSleep?: () => void;
  private status: LinkStatus;
  private registerId = '';
  private heartbeatSeq = 0;
  /** Extensions of the last register ack (the dev hub: resume-v1; the Go hub: none). */
  private extensions: readonly string[] = [];
  /** extensions.includes('resume-v1'), kept as a flag: the relay reads it for every chunk. */
  private resumes = false;
  private readonly unknownTypes = new Set<string>();
  private pendingWrites = 0;
  private writeProgressAt = 0;
  private dataInFlight = 0;
  private readonly dataQueue: Array<{ text: string; bytes: number; resolve: (ok: boolean) => void }> = [];
  private readonly highWater: number;
  /** Count of messages sent and received, for the console and tests. */
  readonly counters = { sent: 0, received: 0, invalid: 0, dials: 0, refusedOversize: 0 };

  constructor(private readonly opts: HubLinkOptions) {
    super();
    this.highWater = opts.dataHighWaterBytes ?? 256 * 1024;
    this.status = { state: 'idle', hubUrl: opts.url, since: Date.now(), attempts: 0 };
  }

  get state(): LinkStatus {
    return this.status;
  }

  get connected(): boolean {
    return this.status.state === 'connected';
  }

  /** Whether the hub said (in its last register ack) that it resumes streams across a dropped link. */
  get hubResumes(): boolean {
    return this.resumes;
  }

  /** The extensions the hub named in its last register ack. */
  get hubExtensions(): readonly string[] {
    return this.extensions;
  }

  private setExtensions(extensions: readonly string[]): void {
    this.extensions = extensions;
    this.resumes = extensions.includes(RESUME_EXTENSION);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    this.ws?.terminate();
    await this.loop;
    this.setState('stopped', 'stopped by the owner');
  }

  /** Ends a backoff or auth-failed wait now (the key or URL changed, or the owner pressed Retry). */
  retryNow(): void {
    this.wakeSleep?.();
  }

  /** Changes the hub URL; the current connection is closed and the link redials the new one. */
  setUrl(url: string): void {
    this.opts.url = url;
    this.status = { ...this.status, hubUrl: url };
    this.ws?.close(1000, 'hub url changed');
    this.retryNow();
  }

  /** Drops the current connection (it will be re-dialled). Used when the key changes. */
  reconnect(reason: string): void {
    this.opts.log.info(`reconnecting: ${reason}`);
    this.ws?.close(1000, reason.slice(0, 100));
    this.retryNow();
  }

  /** Announces a changed model set (toggle, engine appeared or vanished) by registering again. */
  reRegister(): void {
    if (this.ws?.readyState !== WebSocket.OPEN || !this.connected) return;
    this.registerId = crypto.randomUUID();
    this.sendControl(out.register(this.registerId, this.opts.register()));
  }

  /** Sends now, ahead of queued data. Returns false when not connected or the message is too big. */
  sendControl(msg: Outbound): boolean {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    const enc = encodeOnce(msg);
    if (!this.sizeOk(enc)) return false;
    this.writeStarted();
    ws.send(enc.text, this.writeDone);
    this.counters.sent++;
    return true;
  }

  private writeStarted(): void {
    if (this.pendingWrites++ === 0) this.writeProgressAt = Date.now();
  }

  private readonly writeDone = (): void => {
    // A callback of a socket already closed may come after the next session reset the count.
    if (this.pendingWrites > 0) this.pendingWrites--;
    this.writeProgressAt = Date.now();
  };

  /**
   * Sends a data message (stream chunk). True when it was handed to the socket at once, false when the
   * link is down; while the socket is backed up it returns a promise of that instead, which waits, so
   * a producer that awaits it reads its engine no faster than the hub takes the data.
   * The message is encoded once and its size checked once, by the relay (which answers an oversize one
   * with the hub's 413 error): no second check here on the hot path.
   */
  sendData(enc: EncodedMessage): boolean | Promise<boolean> {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || !this.connected) return false;
    if (this.dataQueue.length === 0 && this.dataInFlight < this.highWater) {
      this.write(ws, enc.text, enc.bytes);
      return true;
    }
    return new Promise((resolve) => this.dataQueue.push({ text: enc.text, bytes: enc.bytes, resolve }));
  }

  /** Bytes waiting in the data lane (not yet handed to the socket). */
  get queuedDataMessages(): number {
    return this.dataQueue.length;
  }

  private sizeOk(enc: EncodedMessage): boolean {
    if (enc.bytes <= MAX_MESSAGE_BYTES) return true;
    this.counters.refusedOversize++;
    this.opts.log.error(`refused to send a ${enc.type} of ${enc.bytes} bytes: over the 1 MB message limit`, { requestId: enc.requestId });
    return false;
  }

  private write(ws: WebSocket, text: string, bytes: number): void {
    this.dataInFlight += bytes;
    this.counters.sent++;
    this.writeStarted();
    ws.send(text, () => {
      this.writeDone();
      this.dataInFlight -= bytes;
      this.pump();
    });
  }

  private pump(): void {
    const ws = this.ws;
    while (this.dataQueue.length > 0 && this.dataInFlight < this.highWater) {
      const next = this.dataQueue.shift()!;
      if (!ws || ws.readyState !== WebSocket.OPEN) {
        next.resolve(false);
        continue;
      }
      this.write(ws, next.text, next.bytes);
      next.resolve(true);
    }
  }

  private failQueued(): void {
    for (const q of this.dataQueue.splice(0)) q.resolve(false);
    this.dataInFlight = 0;
    this.pendingWrites = 0;
  }

  private setState(state: LinkState, reason?: string, nextRetryAt?: number, code?: LinkReasonCode): void {
    this.status = {
      state,
      hubUrl: this.opts.url,
      since: Date.now(),
      attempts: this.status.attempts,
      ...(reason ? { reason } : {}),
      ...(reason && code ? { code } : {}),
      ...(nextRetryAt ? { nextRetryAt } : {}),
    };
    this.emit('state', this.status);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(t);
        this.wakeSleep = undefined;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.wakeSleep = done;
    });
  }

  private async run(): Promise<void> {
    const { reconnectMaxBackoffMs, authFailedBackoffMs } = this.opts.timings;
    // Failed dials in a row; the first redial after a working link is immediate (Go reconnect()).
    let failures = 1;
    let lastReason: string | undefined;
    let lastCode: LinkReasonCode | undefined;
    while (!this.stopped) {
      this.status.attempts = failures + 1;
      // A redial keeps saying why the last connection ended (the console shows it while connecting).
      this.setState('connecting', lastReason, undefined, lastCode);
      const result = await this.session();
      if (this.stopped) break;
      lastReason = result.reason;
      lastCode = result.code;
      this.emit('disconnected', result.reason, result.code);
      if (result.authFailed) {
        const next = Date.now() + authFailedBackoffMs;
        this.setState('auth_failed', result.reason, next, result.code);
        this.opts.log.error(result.reason);
        await this.sleep(authFailedBackoffMs);
        failures = 1;
        continue;
      }
      // A link that was up for a while is redialled at once; one that dies right after its register ack
      // (a hub that accepts and drops) backs off like a failed dial instead of spinning.
      failures = result.registered && result.upMs >= 1000 ? 0 : failures;
      const delay = reconnectDelayMs(failures, reconnectMaxBackoffMs);
      failures++;
      this.setState('backoff', result.reason, Date.now() + delay, result.code);
      this.opts.log.warn(`hub link down (${result.reason}); ${delay === 0 ? 'redialling now' : `retrying in ${(delay / 1000).toFixed(1)} s`}`);
      if (delay > 0) await this.sleep(delay);
    }
  }

  /** One connection, from dial to close. Never rejects. */
  private session(): Promise<{ registered: boolean; authFailed: boolean; reason: string; code: LinkReasonCode; upMs: number }> {
    const { pingIntervalMs, readTimeoutMs, heartbeatIntervalMs } = this.opts.timings;
    const handshakeTimeout = this.opts.timings.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS;
    const writeTimeoutMs = this.opts.timings.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    const log = this.opts.log;
    this.counters.dials++;
    return new Promise((resolve) => {
      let registered = false;
      let registeredAt = 0;
      let authFailed = false;
      let registerTimer: NodeJS.Timeout | undefined;
      let writeTimer: NodeJS.Timeout | undefined;
      let reason = 'connection closed';
      let code: LinkReasonCode = 'CLOSED';
      let readTimer: NodeJS.Timeout | undefined;
      let pingTimer: NodeJS.Timeout | undefined;
      let heartbeatTimer: NodeJS.Timeout | undefined;
      let missedHeartbeats = 0;
      /** The hub's last refusal while registering (a failed ack or an error frame), for the deadline's reason. */
      let refusal: string | undefined;
      const ws = new WebSocket(this.opts.url, { maxPayload: MAX_MESSAGE_BYTES, handshakeTimeout, perMessageDeflate: false });
      this.ws = ws;
      this.pendingWrites = 0;

      const resetRead = (): void => {
        clearTimeout(readTimer);
        readTimer = setTimeout(() => {
          code = 'READ_DEADLINE';
          reason = `the hub sent nothing for ${readTimeoutMs / 1000} s (read deadline)`;
          ws.terminate();
        }, readTimeoutMs);
      };
      const beat = (): void => {
        if (missedHeartbeats >= MISSED_HEARTBEATS_LIMIT) {
          code = 'HEARTBEAT_UNACKED';
          reason = `${MISSED_HEARTBEATS_LIMIT} heartbeats were not acknowledged`;
          ws.terminate();
          return;
        }
        missedHeartbeats++;
        this.heartbeatSeq++;
        this.sendControl({ ...out.heartbeat(this.opts.heartbeat()), request_id: `hb-${this.heartbeatSeq}` });
      };
      const onRegistered = (ack: RegisterAck): void => {
        const extensions = ack.extensions ?? [];
        registered = true;
        registeredAt = Date.now();
        clearTimeout(registerTimer);
        this.setExtensions(extensions);
        this.status.attempts = 0;
        this.setState('connected');
        log.info(`registered with ${this.opts.url}${extensions.length ? ` (hub extensions: ${extensions.join(', ')})` : ''}`);
        // Health right after every register ack, or the hub keeps a stale status (Go provider PR 32).
        this.sendControl(out.modelHealth(this.opts.nodeId, this.opts.modelHealth()));
        clearInterval(heartbeatTimer);
        heartbeatTimer = setInterval(beat, heartbeatIntervalMs);
        this.emit('registerAck', ack);
        this.emit('registered');
      };

      // What this connection handles itself (dispatch.ts routes the other types).
      const session: LinkSession = {
        unknown: (msg) => {
          // Logged once per type, never answered: the hub may speak newer types than we know.
          if (!this.unknownTypes.has(msg.messageType) && this.unknownTypes.size < UNKNOWN_TYPES_REMEMBERED) {
            this.unknownTypes.add(msg.messageType);
            log.warn(`ignored a message of unknown type "${msg.messageType.slice(0, 64)}" from the hub (further ones of this type are ignored silently)`);
          }
        },
        ack: (msg) => {
          // Go types the ack's request_id without omitempty, so a hub that leaves it unset sends "": any
          // successful ack completes registration, as the Go client accepts it (HUB-PROTOCOL.md, Envelope).
          const ackFor = msg.payload.request_id || msg.requestId;
          if (msg.payload.success === false && (!registered || (ackFor && ackFor === this.registerId))) {
            // Go logs a failed ack and keeps the connection (inference_client.go): the hub may still
            // accept, and a hub that never does is caught by the register deadline, which then says why.
            refusal = msg.payload.message ?? 'no reason given';
            log.warn(`the hub refused ${registered ? 're-registration (the previous registration stands)' : 'registration'}: ${refusal}`, { code: 'REGISTER_REFUSED' });
            return;
          }
          if (!registered) {
            if (msg.payload.success === true) onRegistered(msg.payload);
            else log.warn('ignored an ack without "success" while registering');
            return;
          }
          if (ackFor && ackFor === this.registerId) {
            this.setExtensions(msg.payload.extensions ?? []);
            this.emit('registerAck', msg.payload);
          }
          // Any other ack after registration acknowledges a heartbeat.
          missedHeartbeats = 0;
        },
        error: (msg) => {
          const errCode = Number(msg.payload.code);
          if (errCode === 401 || errCode === 403) {
            authFailed = true;
            code = 'AUTH_FAILED';
            reason = `The hub refused the provider key: ${msg.payload.message ?? `code ${errCode}`}. Check the key in Settings or config.toml.`;
            ws.close(1000, 'auth failed');
            return true;
          }
          if (!registered) {
            // Logged, and the connection kept, as Go does; the register deadline says why if no ack follows.
            refusal = `${msg.payload.message ?? 'no message'} (code ${String(msg.payload.code ?? 'none')})`;
            log.warn(`the hub sent an error while registering: ${refusal}`, { code: 'REGISTER_REFUSED', requestId: msg.requestId });
            return true;
          }
          return false;
        },
      };
      const table = (this.opts.dispatch ?? ((sess: LinkSession) => sessionTable(sess, log)))(session);

      ws.on('open', () => {
        this.setState('registering');
        resetRead();
        pingTimer = setInterval(() => {
          if (ws.readyState === WebSocket.OPEN) ws.ping();
        }, pingIntervalMs);
        this.registerId = crypto.randomUUID();
        this.sendControl(out.register(this.registerId, this.opts.register()));
        // No register ack within 3 heartbeat ticks: a hub that does not answer is a dead link (Go #73).
        registerTimer = setTimeout(() => {
          const within = `within ${(MISSED_HEARTBEATS_LIMIT * heartbeatIntervalMs) / 1000} s`;
          code = refusal === undefined ? 'REGISTER_TIMEOUT' : 'REGISTER_REFUSED';
          reason = refusal === undefined ? `the hub did not acknowledge registration ${within}` : `the hub refused registration: ${refusal} (no acceptance followed ${within})`;
          ws.terminate();
        }, MISSED_HEARTBEATS_LIMIT * heartbeatIntervalMs);
        // Write deadline: a message the socket has not taken within writeTimeoutMs ends the connection.
        writeTimer = setInterval(() => {
          if (this.ws === ws && this.pendingWrites > 0 && Date.now() - this.writeProgressAt > writeTimeoutMs) {
            code = 'WRITE_DEADLINE';
            reason = `a write to the hub did not complete within ${writeTimeoutMs / 1000} s (write deadline)`;
            ws.terminate();
          }
        }, Math.max(10, Math.min(1000, writeTimeoutMs / 4)));
      });
      ws.on('pong', resetRead);
      ws.on('unexpected-response', (_req, res) => {
        if (res.statusCode === 401 || res.statusCode === 403) {
          authFailed = true;
          code = 'AUTH_FAILED';
          reason = `The hub refused the provider key (HTTP ${res.statusCode}). Check the key in Settings or config.toml.`;
        } else {
          code = 'UPGRADE_REFUSED';
          reason = `the hub answered HTTP ${res.statusCode} instead of a WebSocket upgrade`;
        }
        res.resume();
        ws.terminate();
      });
      ws.on('error', (err) => {
        const errno = (err as NodeJS.ErrnoException).code;
        if (authFailed) return;
        code = errno === 'ECONNREFUSED' ? 'UNREACHABLE' : errno === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'MESSAGE_TOO_LARGE' : 'SOCKET_ERROR';
        reason = errno === 'ECONNREFUSED' ? `cannot reach the hub at ${this.opts.url} (connection refused)` : err.message;
      });
      ws.on('message', (data, isBinary) => {
        resetRead();
        this.counters.received++;
        if (isBinary) {
          this.counters.invalid++;
          log.warn('ignored a binary frame from the hub');
          return;
        }
        let msg: Inbound;
        try {
          msg = parseInbound(data.toString());
        } catch (e) {
          this.counters.invalid++;
          const err = e as InboundError;
          log.warn(`invalid message from the hub: ${err.message}`, { requestId: err.requestId, code: err.code });
          if (err.requestId && err.messageType === 'inference') {
            // A refused inference goes out on its result path (stream_end / ack with a status), not as an error frame.
            for (const m of out.refusal(err.requestId, err.stream === true, 400, err.message)) this.sendControl(m);
          } else if (err.requestId) this.sendControl(out.error(err.requestId, 400, err.message));
          return;
        }
        dispatch(table, msg, (e, later) => this.handlerFailed(msg, e, later));
      });
      ws.on('close', (closeCode) => {
        clearTimeout(readTimer);
        clearTimeout(registerTimer);
        clearInterval(writeTimer);
        clearInterval(pingTimer);
        clearInterval(heartbeatTimer);
        if (this.ws === ws) this.ws = undefined;
        this.failQueued();
        if (reason === 'connection closed' && closeCode) reason = `connection closed (code ${closeCode})`;
        resolve({ registered, authFailed, reason, code, upMs: registered ? Date.now() - registeredAt : 0 });
      });
    });
  }

  /**
   * A handler failed on one message: logged with its request id and, when nothing went out for it yet,
   * answered with a coded 500 on its result path. The connection and every other request carry on.
   */
  private handlerFailed(msg: Inbound, e: unknown, later: boolean): void {
    this.counters.invalid++;
    const text = e instanceof Error ? e.message : String(e);
    this.opts.log.error(`handling the hub's ${msg.type}${msg.requestId ? ` ${msg.requestId}` : ''} failed: ${text}`, { requestId: msg.requestId, code: 'handler_failed', stack: e instanceof Error ? e.stack : undefined });
    // An inference that started answers its own failures (the relay); one that never started is refused here.
    if (!msg.requestId || (later && msg.type === 'inference') || msg.type === 'ack' || msg.type === 'error' || msg.type === 'cancel') return;
    const why = `internal error while handling this ${msg.type}: ${text}`;
    if (msg.type === 'inference') for (const m of out.refusal(msg.requestId, msg.payload.stream ?? msg.payload.request.stream === true, 500, why)) this.sendControl(m);
    else this.sendControl(out.error(msg.requestId, 500, why));
  }
}
