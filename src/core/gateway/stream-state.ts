// One stream-v1 request as the gateway keeps it: its numbered messages (seq 1, 2, …) from `started`
// on, kept until the client acks them, sent to whichever connection is attached within the
// flow-control window. The engine is read only while there is room: while a client is attached, room
// means fewer unacked messages/bytes than the window; while it is away, less than the retention cap.
export interface StreamConn {
  readonly id: number;
  send(text: string): void;
}

export interface StreamLimits {
  windowBytes: number;
  windowMessages: number;
  /** Bytes kept for this stream while no client is attached. */
  retentionBytes: number;
  ackTimeoutMs: number;
}

export interface StreamHooks {
  /** Retained bytes changed (for the registry's total). */
  onBytes(delta: number): void;
  /** All streams together are over the global cap: detached streams must not grow. */
  overGlobalCap(): boolean;
  /** The attached client kept the window full for ackTimeoutMs without acking. */
  onAckTimeout(state: StreamState, conn: StreamConn): void;
}

interface Entry {
  seq: number;
  text: string;
  bytes: number;
  /** Sent even when the window is full (a cancellation the client asked for). */
  urgent: boolean;
}

export type AckResult = 'ok' | 'not_attached' | 'ahead';

export class StreamState {
  readonly controller = new AbortController();
  /** Unacked messages, seq acked+1 … lastSeq, contiguous. */
  private entries: Entry[] = [];
  private entriesBytes = 0;
  /** Bytes of entries sent to the attached connection and not acked. */
  private inFlightBytes = 0;
  private acked = 0;
  /** Highest seq sent to the attached connection. */
  private sent = 0;
  /** Highest seq ever sent to any connection. */
  private highestSent = 0;
  private lastSeq = 0;
  private conn?: StreamConn;
  private waiters: Array<() => void> = [];
  private ackTimer?: NodeJS.Timeout;
  finishedAt?: number;
  detachedAt?: number;
  /** The client sent cancel: the terminal error skips the window. */
  cancelledByClient = false;
  private closed = false;

  constructor(
    readonly keyName: string,
    readonly requestId: string,
    readonly model: string,
    private readonly limits: StreamLimits,
    private readonly hooks: StreamHooks,
    /** The id (hash) of the key that started it: what it is bound to, since key names can be reused. */
    readonly keyId: string = keyName,
  ) {
    // A cancelled request must not stay parked waiting for room.
    this.controller.signal.addEventListener('abort', () => this.notify(), { once: true });
  }

  get attachedTo(): StreamConn | undefined {
    return this.conn;
  }
  get finished(): boolean {
    return this.finishedAt !== undefined;
  }
  get isClosed(): boolean {
    return this.closed;
  }
  get lastAcked(): number {
    return this.acked;
  }
  get lastSent(): number {
    return this.highestSent;
  }
  get retainedBytes(): number {
    return this.entriesBytes;
  }
  get unacked(): number {
    return this.entries.length;
  }
  /** Finished and the client acked everything: nothing left to deliver. */
  get delivered(): boolean {
    return this.finished && this.entries.length === 0;
  }

  /** Adds the next message (build gets its seq) and sends what the window allows. */
  push(build: (seq: number) => Record<string, unknown>): void {
    if (this.closed || this.finished) return;
    this.append(build, false);
  }

  /** Adds the terminal message (complete or error). `urgent` drops what was never sent and skips the window. */
  finish(build: (seq: number) => Record<string, unknown>, urgent = false): void {
    if (this.closed || this.finished) return;
    if (urgent) this.dropUnsent();
    this.finishedAt = Date.now();
    this.append(build, urgent);
  }

  /** Sends a message outside the numbered sequence (accepted, started) to the attached client. */
  sendDirect(msg: Record<string, unknown>): void {
    if (!this.closed) this.conn?.send(JSON.stringify(msg));
  }

  /**
   * Attaches a connection. A new connection gets every message after `fromSeq` (what the client says it
   * has; never below what it acked). The connection already attached just carries on.
   */
  attach(conn: StreamConn, fromSeq: number): void {
    if (this.closed) return;
    if (this.conn !== conn) {
      this.clearAckTimer();
      this.conn = conn;
      this.detachedAt = undefined;
      this.acknowledge(Math.min(fromSeq, this.highestSent));
      this.sent = this.acked;
      this.inFlightBytes = 0;
    }
    this.pump();
    this.notify();
  }

  detach(conn: StreamConn): void {
    if (this.conn !== conn) return;
    this.conn = undefined;
    this.detachedAt = Date.now();
    this.clearAckTimer();
    this.notify();
  }

  /** The client consumed everything up to `seq`. */
  ack(conn: StreamConn, seq: number): AckResult {
    if (this.conn !== conn) return 'not_attached';
    if (seq > this.sent) return 'ahead';
    if (seq > this.acked) {
      this.acknowledge(seq);
      this.clearAckTimer();
      this.pump();
      this.notify();
    }
    return 'ok';
  }

  /** true when the engine may produce more. */
  hasRoom(): boolean {
    if (this.closed || this.controller.signal.aborted) return true;
    if (this.conn) return this.entries.length < this.limits.windowMessages && this.entriesBytes < this.limits.windowBytes;
    return this.entriesBytes < this.limits.retentionBytes && !this.hooks.overGlobalCap();
  }

  /** Resolves when the engine may produce more (or the request was cancelled). */
  waitForRoom(): Promise<void> {
    if (this.hasRoom()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Re-checks room (after anything that can free it). */
  notify(): void {
    if (this.waiters.length === 0 || !this.hasRoom()) return;
    const w = this.waiters;
    this.waiters = [];
    for (const resolve of w) resolve();
  }

  /** Forgets everything; a running request is cancelled. */
  close(reason = 'the stream was closed'): void {
    if (this.closed) return;
    this.closed = true;
    this.clearAckTimer();
    if (!this.finished) this.controller.abort(new Error(reason));
    this.hooks.onBytes(-this.entriesBytes);
    this.entries = [];
    this.entriesBytes = 0;
    this.inFlightBytes = 0;
    this.conn = undefined;
    this.notify();
  }

  private append(build: (seq: number) => Record<string, unknown>, urgent: boolean): void {
    const seq = ++this.lastSeq;
    const text = JSON.stringify(build(seq));
    const bytes = Buffer.byteLength(text);
    this.entries.push({ seq, text, bytes, urgent });
    this.entriesBytes += bytes;
    this.hooks.onBytes(bytes);
    this.pump();
  }

  private acknowledge(seq: number): void {
    while (this.entries.length > 0 && (this.entries[0] as Entry).seq <= seq) {
      const e = this.entries.shift() as Entry;
      this.entriesBytes -= e.bytes;
      if (e.seq <= this.sent) this.inFlightBytes -= e.bytes;
      this.hooks.onBytes(-e.bytes);
    }
    this.acked = Math.max(this.acked, seq);
    if (this.sent < this.acked) this.sent = this.acked;
  }

  /** Messages nobody was ever sent are dropped and their numbers reused, so seq stays gap-free. */
  private dropUnsent(): void {
    while (this.entries.length > 0 && (this.entries[this.entries.length - 1] as Entry).seq > this.highestSent) {
      const e = this.entries.pop() as Entry;
      this.entriesBytes -= e.bytes;
      this.hooks.onBytes(-e.bytes);
    }
    this.lastSeq = Math.max(this.highestSent, this.acked);
  }

  private pump(): void {
    const c = this.conn;
    if (!c || this.closed) return;
    const { windowMessages, windowBytes } = this.limits;
    let idx = this.sent - this.acked;
    while (idx < this.entries.length) {
      const next = this.entries[idx] as Entry;
      const inFlight = this.sent - this.acked;
      const full = inFlight >= windowMessages || (inFlight > 0 && this.inFlightBytes + next.bytes > windowBytes);
      if (full && !next.urgent) break;
      c.send(next.text);
      this.sent = next.seq;
      this.highestSent = Math.max(this.highestSent, next.seq);
      this.inFlightBytes += next.bytes;
      idx++;
    }
    const inFlight = this.sent - this.acked;
    const blocked = inFlight >= windowMessages || this.inFlightBytes >= windowBytes || (idx < this.entries.length && inFlight > 0);
    if (blocked) this.armAckTimer(c);
    else this.clearAckTimer();
  }

  private armAckTimer(c: StreamConn): void {
    if (this.ackTimer) return;
    this.ackTimer = setTimeout(() => {
      this.ackTimer = undefined;
      if (this.conn === c && !this.closed) this.hooks.onAckTimeout(this, c);
    }, this.limits.ackTimeoutMs);
    this.ackTimer.unref();
  }

  private clearAckTimer(): void {
    if (this.ackTimer) clearTimeout(this.ackTimer);
    this.ackTimer = undefined;
  }
}
