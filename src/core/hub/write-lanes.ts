// The two write lanes of one hub socket. Control messages (register, heartbeat, acks, errors, refusals)
// are handed to the socket at once. Data messages (stream chunks, replays) go through a bounded lane:
// while more than `highWaterBytes` of them are on the socket unconfirmed, writers get a promise that
// settles when theirs is handed on, so a producer that awaits it reads its engine no faster than the hub
// takes the data. One instance per connection: a late write callback of a closed socket can only touch
// the lanes of that socket, never the next connection's.
import WebSocket from 'ws';
import type { Logger } from '../base/log';
import { monoMs } from '../base/clock';
import { encodeOnce, MAX_MESSAGE_BYTES, type EncodedMessage, type Outbound } from '../protocol/messages';

/** The link's counters the lanes add to. */
export interface LaneCounters {
  sent: number;
  refusedOversize: number;
}

interface Queued {
  text: string;
  bytes: number;
  resolve: (handed: boolean) => void;
}

export class WriteLanes {
  /** Writes handed to the socket whose callback has not come yet. */
  private pending = 0;
  /** When a write last completed (or the first pending one started): the write deadline's clock. */
  private progressAt = 0;
  private inFlight = 0;
  private readonly queue: Queued[] = [];

  constructor(
    private readonly ws: WebSocket,
    private readonly o: { highWaterBytes: number; counters: LaneCounters; log: Logger },
  ) {}

  /** Sends now, ahead of queued data. False when the socket is not open or the message is too big. */
  control(msg: Outbound): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    const enc = encodeOnce(msg);
    if (!this.sizeOk(enc)) return false;
    this.started();
    this.ws.send(enc.text, this.done);
    this.o.counters.sent++;
    return true;
  }

  /**
   * Sends a data message: true when it was handed to the socket at once, false when the socket is not
   * open, and while the socket is backed up a promise of that, which waits. Encoded and size-checked
   * once by the caller (the relay answers an oversize one with the hub's 413): no second check here.
   */
  data(enc: EncodedMessage): boolean | Promise<boolean> {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    if (this.queue.length === 0 && this.inFlight < this.o.highWaterBytes) {
      this.write(enc.text, enc.bytes);
      return true;
    }
    return new Promise((resolve) => this.queue.push({ text: enc.text, bytes: enc.bytes, resolve }));
  }

  /** Data messages waiting in the lane (not yet handed to the socket). */
  get queued(): number {
    return this.queue.length;
  }

  /** How long the oldest unconfirmed write has gone without progress (0 when none is pending). */
  stalledMs(now = monoMs()): number {
    return this.pending > 0 ? now - this.progressAt : 0;
  }

  /** The socket closed: every queued writer hears that its message was not sent. */
  close(): void {
    for (const q of this.queue.splice(0)) q.resolve(false);
  }

  private sizeOk(enc: EncodedMessage): boolean {
    if (enc.bytes <= MAX_MESSAGE_BYTES) return true;
    this.o.counters.refusedOversize++;
    this.o.log.error(`refused to send a ${enc.type} of ${enc.bytes} bytes: over the 1 MB message limit`, { requestId: enc.requestId });
    return false;
  }

  private started(): void {
    // Monotonic (base/clock.ts): a wall-clock step forward must not read as a stalled write.
    if (this.pending++ === 0) this.progressAt = monoMs();
  }

  private readonly done = (): void => {
    this.pending--;
    this.progressAt = monoMs();
  };

  private write(text: string, bytes: number): void {
    this.inFlight += bytes;
    this.o.counters.sent++;
    this.started();
    this.ws.send(text, () => {
      this.done();
      this.inFlight -= bytes;
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0 && this.inFlight < this.o.highWaterBytes) {
      const next = this.queue.shift()!;
      if (this.ws.readyState !== WebSocket.OPEN) {
        next.resolve(false);
        continue;
      }
      this.write(next.text, next.bytes);
      next.resolve(true);
    }
  }
}
