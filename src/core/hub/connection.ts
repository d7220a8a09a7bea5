// One connection to the hub, from dial to close: the WebSocket handshake, register and its deadline,
// then serving (heartbeats, pings and the read deadline, the write deadline) until the socket closes,
// and why it closed. It handles the frames that belong to the connection itself (acks, errors, unknown
// types: the `LinkSession`) and hands every other frame to the routing table it is given. HubLink runs one
// of these at a time, and backs off between them.
import crypto from 'node:crypto';
import WebSocket from 'ws';
import type { LinkReasonCode } from '../../shared/types';
import type { Logger } from '../base/log';
import { elapsedMs, monoMs } from '../base/clock';
import type { InboundTable, LinkSession } from './dispatch';
import type { InboundFrames } from './inbound';
import { WriteLanes, type LaneCounters } from './write-lanes';
import { MAX_MESSAGE_BYTES, out, type AckPayload, type Health, type HeartbeatPayload, type RegisterPayload } from '../protocol/messages';

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
const MISSED_HEARTBEATS_LIMIT = 3;

/** How a connection ended. */
export interface ConnectionEnd {
  registered: boolean;
  authFailed: boolean;
  reason: string;
  code: LinkReasonCode;
  /** How long it was registered (0 when it never was). */
  upMs: number;
}

export interface ConnectionOptions {
  url: string;
  nodeId: string;
  timings: LinkTimings;
  log: Logger;
  counters: LaneCounters;
  dataHighWaterBytes: number;
  inbound: InboundFrames;
  /** The routing table of this connection, given its session. */
  table: (session: LinkSession) => InboundTable;
  register: () => RegisterPayload;
  heartbeat: () => HeartbeatPayload;
  modelHealth: () => Record<string, Health>;
  /** The next heartbeat's request id (unique across connections). */
  heartbeatId: () => string;
  /** The socket opened: registering now. */
  opened: () => void;
  /** The first successful register ack of this connection: it is serving now. */
  registered: (ack: AckPayload) => void;
  /** Every successful register ack (the first and each re-register's), after `registered` for the first. */
  registerAck: (ack: AckPayload, first: boolean) => void;
}

export class Connection {
  readonly ended: Promise<ConnectionEnd>;
  readonly lanes: WriteLanes;
  private readonly ws: WebSocket;
  private registeredAt = 0;
  private isRegistered = false;
  private registerId = '';
  private authFailed = false;
  private reason = 'connection closed';
  private code: LinkReasonCode = 'CLOSED';
  private missedHeartbeats = 0;
  /** The hub's last refusal while registering (a failed ack or an error frame), for the deadline's reason. */
  private refusal: string | undefined;
  private readonly timers: { read?: NodeJS.Timeout; register?: NodeJS.Timeout; ping?: NodeJS.Timeout; heartbeat?: NodeJS.Timeout; write?: NodeJS.Timeout } = {};

  constructor(private readonly o: ConnectionOptions) {
    this.ws = new WebSocket(o.url, {
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: o.timings.handshakeTimeoutMs ?? HANDSHAKE_TIMEOUT_MS,
      perMessageDeflate: false,
    });
    this.lanes = new WriteLanes(this.ws, { highWaterBytes: o.dataHighWaterBytes, counters: o.counters, log: o.log });
    const table = o.table(this.session());
    this.ws.on('open', () => this.onOpen());
    this.ws.on('pong', () => this.resetRead());
    this.ws.on('unexpected-response', (_req, res) => {
      if (res.statusCode === 401 || res.statusCode === 403) {
        this.why('AUTH_FAILED', `The hub refused the provider key (HTTP ${res.statusCode}). Check the key in Settings or config.toml.`);
        this.authFailed = true;
      } else this.why('UPGRADE_REFUSED', `the hub answered HTTP ${res.statusCode} instead of a WebSocket upgrade`);
      res.resume();
      this.ws.terminate();
    });
    this.ws.on('error', (err) => {
      if (this.authFailed) return;
      const errno = (err as NodeJS.ErrnoException).code;
      if (errno === 'ECONNREFUSED') this.why('UNREACHABLE', `cannot reach the hub at ${o.url} (connection refused)`);
      else this.why(errno === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' ? 'MESSAGE_TOO_LARGE' : 'SOCKET_ERROR', err.message);
    });
    this.ws.on('message', (data, isBinary) => {
      this.resetRead();
      o.inbound.receive(data, isBinary, table);
    });
    this.ended = new Promise((resolve) => {
      this.ws.on('close', (closeCode) => {
        for (const t of Object.values(this.timers)) clearTimeout(t);
        this.lanes.close();
        if (this.reason === 'connection closed' && closeCode) this.reason = `connection closed (code ${closeCode})`;
        resolve({
          registered: this.isRegistered,
          authFailed: this.authFailed,
          reason: this.reason,
          code: this.code,
          upMs: this.isRegistered ? elapsedMs(this.registeredAt) : 0,
        });
      });
    });
  }

  /** Registered and the socket open: what a re-register or a data message needs. */
  get serving(): boolean {
    return this.isRegistered && this.ws.readyState === WebSocket.OPEN;
  }

  /** Announces the model set again (a new register on the same connection). */
  reRegister(): void {
    if (!this.serving) return;
    this.registerId = crypto.randomUUID();
    this.lanes.control(out.register(this.registerId, this.o.register()));
  }

  /** Closes it cleanly (the URL or the key changed); the link then dials again. */
  close(reason: string): void {
    this.ws.close(1000, reason.slice(0, 100));
  }

  /** Drops it at once (shutdown). */
  terminate(): void {
    this.ws.terminate();
  }

  /** What the link will say when this connection has closed. */
  private why(code: LinkReasonCode, reason: string): void {
    this.code = code;
    this.reason = reason;
  }

  /** Drops the connection now, saying why. */
  private end(code: LinkReasonCode, reason: string): void {
    this.why(code, reason);
    this.ws.terminate();
  }

  private onOpen(): void {
    const { pingIntervalMs, heartbeatIntervalMs } = this.o.timings;
    const writeTimeoutMs = this.o.timings.writeTimeoutMs ?? WRITE_TIMEOUT_MS;
    this.o.opened();
    this.resetRead();
    this.timers.ping = setInterval(() => {
      if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
    }, pingIntervalMs);
    this.registerId = crypto.randomUUID();
    this.lanes.control(out.register(this.registerId, this.o.register()));
    // No register ack within 3 heartbeat ticks: a hub that does not answer is a dead link (Go #73).
    this.timers.register = setTimeout(() => {
      const within = `within ${(MISSED_HEARTBEATS_LIMIT * heartbeatIntervalMs) / 1000} s`;
      if (this.refusal === undefined) this.end('REGISTER_TIMEOUT', `the hub did not acknowledge registration ${within}`);
      else this.end('REGISTER_REFUSED', `the hub refused registration: ${this.refusal} (no acceptance followed ${within})`);
    }, MISSED_HEARTBEATS_LIMIT * heartbeatIntervalMs);
    // Write deadline: a message the socket has not taken within writeTimeoutMs ends the connection.
    this.timers.write = setInterval(
      () => {
        if (this.lanes.stalledMs() > writeTimeoutMs)
          this.end('WRITE_DEADLINE', `a write to the hub did not complete within ${writeTimeoutMs / 1000} s (write deadline)`);
      },
      Math.max(10, Math.min(1000, writeTimeoutMs / 4)),
    );
  }

  private resetRead(): void {
    const { readTimeoutMs } = this.o.timings;
    clearTimeout(this.timers.read);
    this.timers.read = setTimeout(() => this.end('READ_DEADLINE', `the hub sent nothing for ${readTimeoutMs / 1000} s (read deadline)`), readTimeoutMs);
  }

  private beat(): void {
    if (this.missedHeartbeats >= MISSED_HEARTBEATS_LIMIT) {
      this.end('HEARTBEAT_UNACKED', `${MISSED_HEARTBEATS_LIMIT} heartbeats were not acknowledged`);
      return;
    }
    this.missedHeartbeats++;
    this.lanes.control({ ...out.heartbeat(this.o.heartbeat()), request_id: this.o.heartbeatId() });
  }

  private onRegistered(ack: AckPayload): void {
    this.isRegistered = true;
    this.registeredAt = monoMs(); // a duration's start (base/clock.ts)
    clearTimeout(this.timers.register);
    this.o.registered(ack);
    // Health right after every register ack, or the hub keeps a stale status (Go provider PR 32).
    this.lanes.control(out.modelHealth(this.o.nodeId, this.o.modelHealth()));
    clearInterval(this.timers.heartbeat);
    this.timers.heartbeat = setInterval(() => this.beat(), this.o.timings.heartbeatIntervalMs);
    this.o.registerAck(ack, true);
  }

  /** The frames this connection handles itself (dispatch.ts routes the other types). */
  private session(): LinkSession {
    const log = this.o.log;
    return {
      unknown: (msg) => this.o.inbound.unknown(msg),
      ack: (msg) => {
        // Go types the ack's request_id without omitempty, so a hub that leaves it unset sends "": any
        // successful ack completes registration, as the Go client accepts it (HUB-PROTOCOL.md, Envelope).
        const ackFor = msg.payload.request_id || msg.requestId;
        if (msg.payload.success === false && (!this.isRegistered || (ackFor && ackFor === this.registerId))) {
          // Go logs a failed ack and keeps the connection (inference_client.go): the hub may still
          // accept, and a hub that never does is caught by the register deadline, which then says why.
          this.refusal = msg.payload.message ?? 'no reason given';
          log.warn(`the hub refused ${this.isRegistered ? 're-registration (the previous registration stands)' : 'registration'}: ${this.refusal}`, {
            code: 'REGISTER_REFUSED',
          });
          return;
        }
        if (!this.isRegistered) {
          if (msg.payload.success === true) this.onRegistered(msg.payload);
          else log.warn('ignored an ack without "success" while registering');
          return;
        }
        if (ackFor && ackFor === this.registerId) {
          this.o.registerAck(msg.payload, false);
          // Health after every register ack, the re-register's too: a model announced again is heard with its health.
          this.lanes.control(out.modelHealth(this.o.nodeId, this.o.modelHealth()));
        }
        // Any other ack after registration acknowledges a heartbeat.
        this.missedHeartbeats = 0;
      },
      error: (msg) => {
        const errCode = Number(msg.payload.code);
        if (errCode === 401 || errCode === 403) {
          this.why('AUTH_FAILED', `The hub refused the provider key: ${msg.payload.message ?? `code ${errCode}`}. Check the key in Settings or config.toml.`);
          this.authFailed = true;
          this.ws.close(1000, 'auth failed');
          return true;
        }
        if (!this.isRegistered) {
          // Logged, and the connection kept, as Go does; the register deadline says why if no ack follows.
          this.refusal = `${msg.payload.message ?? 'no message'} (code ${String(msg.payload.code ?? 'none')})`;
          log.warn(`the hub sent an error while registering: ${this.refusal}`, { code: 'REGISTER_REFUSED', requestId: msg.requestId });
          return true;
        }
        return false;
      },
    };
  }
}
