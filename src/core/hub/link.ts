// HubLink: the one persistent WebSocket to Swan Inference.
// One loop owns the connection: dial -> register -> serve -> (close) -> backoff -> dial … so there is
// never more than one socket or one reconnect in flight (the Go provider's zombie and double-reconnect
// bugs cannot happen by construction). Each connection is a `Connection` (connection.ts: register,
// heartbeats, deadlines, why it closed) with its own `WriteLanes` (write-lanes.ts: control at once,
// bounded data with backpressure); every frame read goes through `InboundFrames` (inbound.ts: parse,
// refuse with the request id, dispatch). This file is the loop, the status it reports, and the façade
// the rest of the agent uses.
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import type { LinkReasonCode, LinkState, LinkStatus } from '../../shared/types';
import type { Logger } from '../base/log';
import { sessionTable, type InboundTable, type LinkSession } from './dispatch';
import { Connection, type LinkTimings } from './connection';
import { InboundFrames } from './inbound';
import {
  RESUME_EXTENSION,
  type AckPayload,
  type EncodedMessage,
  type Health,
  type HeartbeatPayload,
  type Outbound,
  type RegisterPayload,
} from '../protocol/messages';

export { HANDSHAKE_TIMEOUT_MS, WRITE_TIMEOUT_MS, type LinkTimings } from './connection';

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

export class HubLink extends EventEmitter<HubLinkEvents> {
  private conn?: Connection;
  private stopped = true;
  private loop?: Promise<void>;
  private wakeSleep?: () => void;
  private status: LinkStatus;
  /** Extensions of the last register ack (the dev hub: resume-v1; the Go hub: none). */
  private extensions: readonly string[] = [];
  /** extensions.includes('resume-v1'), kept as a flag: the relay reads it for every chunk. */
  private resumes = false;
  private readonly inbound: InboundFrames;
  /** Count of messages sent and received, for the console and tests. */
  readonly counters = { sent: 0, received: 0, invalid: 0, dials: 0, refusedOversize: 0 };

  constructor(private readonly opts: HubLinkOptions) {
    super();
    this.status = { state: 'idle', hubUrl: opts.url, since: Date.now(), attempts: 0 };
    this.inbound = new InboundFrames({ log: opts.log, counters: this.counters, send: (m) => this.sendControl(m) });
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

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeSleep?.();
    this.conn?.terminate();
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
    this.conn?.close('hub url changed');
    this.retryNow();
  }

  /** Drops the current connection (it will be re-dialled). Used when the key changes. */
  reconnect(reason: string): void {
    this.opts.log.info(`reconnecting: ${reason}`);
    this.conn?.close(reason);
    this.retryNow();
  }

  /** Announces a changed model set (toggle, engine appeared or vanished) by registering again. */
  reRegister(): void {
    if (this.connected) this.conn?.reRegister();
  }

  /** Sends now, ahead of queued data. Returns false when not connected or the message is too big. */
  sendControl(msg: Outbound): boolean {
    return this.conn?.lanes.control(msg) ?? false;
  }

  /**
   * Sends a data message (stream chunk). True when it was handed to the socket at once, false when the
   * link is down; while the socket is backed up it returns a promise of that instead, which waits, so
   * a producer that awaits it reads its engine no faster than the hub takes the data.
   */
  sendData(enc: EncodedMessage): boolean | Promise<boolean> {
    if (!this.conn || !this.connected) return false;
    return this.conn.lanes.data(enc);
  }

  /** Messages waiting in the data lane (not yet handed to the socket). */
  get queuedDataMessages(): number {
    return this.conn?.lanes.queued ?? 0;
  }

  private setExtensions(extensions: readonly string[]): void {
    this.extensions = extensions;
    this.resumes = extensions.includes(RESUME_EXTENSION);
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

  private dial(): Connection {
    const { opts } = this;
    this.counters.dials++;
    return new Connection({
      url: opts.url,
      nodeId: opts.nodeId,
      timings: opts.timings,
      log: opts.log,
      counters: this.counters,
      dataHighWaterBytes: opts.dataHighWaterBytes ?? 256 * 1024,
      inbound: this.inbound,
      table: opts.dispatch ?? ((session) => sessionTable(session, opts.log)),
      register: opts.register,
      heartbeat: opts.heartbeat,
      modelHealth: opts.modelHealth,
      // A fresh UUID per heartbeat, as Go's sendHeartbeat (uuid.New()).
      heartbeatId: () => crypto.randomUUID(),
      opened: () => this.setState('registering'),
      registered: (ack) => {
        const extensions = ack.extensions ?? [];
        this.setExtensions(extensions);
        this.status.attempts = 0;
        this.setState('connected');
        opts.log.info(`registered with ${opts.url}${extensions.length ? ` (hub extensions: ${extensions.join(', ')})` : ''}`);
      },
      registerAck: (ack, first) => {
        if (!first) this.setExtensions(ack.extensions ?? []);
        this.emit('registerAck', ack);
        if (first) this.emit('registered');
      },
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
      const conn = (this.conn = this.dial());
      const result = await conn.ended;
      if (this.conn === conn) this.conn = undefined;
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
}
