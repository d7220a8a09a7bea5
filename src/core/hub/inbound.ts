// What the link does with each frame the hub sends: count it, parse and validate it
// (protocol/messages.ts), refuse a bad one with its request id, and hand a valid one to the connection's
// routing table (dispatch.ts). A refused inference is answered on its result path (stream_end, or an ack
// with a status), never with an error frame: that is where the hub looks for it. A handler that throws or
// rejects fails its one message, answered with a coded 500 when nothing went out for it yet.
import type { RawData } from 'ws';
import type { Logger } from '../base/log';
import { dispatch, type InboundTable } from './dispatch';
import { InboundError, out, parseInbound, type Inbound, type Outbound } from '../protocol/messages';

/** The link's counters inbound handling adds to. */
export interface InboundCounters {
  received: number;
  invalid: number;
}

/** Distinct unknown message types remembered for "logged once per type". */
const UNKNOWN_TYPES_REMEMBERED = 64;

export class InboundFrames {
  private readonly unknownTypes = new Set<string>();

  constructor(
    private readonly o: {
      log: Logger;
      counters: InboundCounters;
      /** Sends on the current connection's control lane. */
      send: (m: Outbound) => boolean;
    },
  ) {}

  /** One frame read from the socket. */
  receive(data: RawData, isBinary: boolean, table: InboundTable): void {
    const { counters, log } = this.o;
    counters.received++;
    if (isBinary) {
      counters.invalid++;
      log.warn('ignored a binary frame from the hub');
      return;
    }
    let msg: Inbound;
    try {
      msg = parseInbound(data.toString());
    } catch (e) {
      counters.invalid++;
      this.refuse(e as InboundError);
      return;
    }
    dispatch(table, msg, (e, later) => this.handlerFailed(msg, e, later));
  }

  /** A message of a type we do not know: logged once per type, never answered (the hub may speak newer types). */
  unknown(msg: Extract<Inbound, { type: 'unknown' }>): void {
    if (this.unknownTypes.has(msg.messageType) || this.unknownTypes.size >= UNKNOWN_TYPES_REMEMBERED) return;
    this.unknownTypes.add(msg.messageType);
    this.o.log.warn(`ignored a message of unknown type "${msg.messageType.slice(0, 64)}" from the hub (further ones of this type are ignored silently)`);
  }

  private refuse(err: InboundError): void {
    this.o.log.warn(`invalid message from the hub: ${err.message}`, { requestId: err.requestId, code: err.code });
    if (!err.requestId) return;
    if (err.messageType === 'inference') for (const m of out.refusal(err.requestId, err.stream === true, 400, err.message)) this.o.send(m);
    else this.o.send(out.error(err.requestId, 400, err.message));
  }

  /**
   * A handler failed on one message: logged with its request id and, when nothing went out for it yet,
   * answered with a coded 500 on its result path. The connection and every other request carry on.
   */
  private handlerFailed(msg: Inbound, e: unknown, later: boolean): void {
    this.o.counters.invalid++;
    const text = e instanceof Error ? e.message : String(e);
    this.o.log.error(`handling the hub's ${msg.type}${msg.requestId ? ` ${msg.requestId}` : ''} failed: ${text}`, {
      requestId: msg.requestId,
      code: 'handler_failed',
      stack: e instanceof Error ? e.stack : undefined,
    });
    // An inference that started answers its own failures (the relay); one that never started is refused here.
    if (!msg.requestId || (later && msg.type === 'inference') || msg.type === 'ack' || msg.type === 'error' || msg.type === 'cancel') return;
    const why = `internal error while handling this ${msg.type}: ${text}`;
    if (msg.type === 'inference')
      for (const m of out.refusal(msg.requestId, msg.payload.stream ?? msg.payload.request.stream === true, 500, why)) this.o.send(m);
    else this.o.send(out.error(msg.requestId, 500, why));
  }
}
