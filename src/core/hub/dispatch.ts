// Hub message dispatch, in one place: every inbound type the hub can send, and who handles it.
// The link's inbound handling (inbound.ts) parses and validates each frame (refusing bad ones with the
// request id) and hands every valid one to dispatch() with the table below, built once per connection:
//   ack        register ack / heartbeat ack -> the connection (connection.ts, its LinkSession)
//   error      auth refused / register refused -> the connection; any other is logged here
//   unknown    logged once per type by the connection, never answered
//   inference, cancel, resume -> HubRelay
//   notice     -> NoticeBook
//   warmup, verify, benchmark -> HubChallenges (internal generations through the inference service)
//
// dispatch() is also the boundary of every handler: a throw, or a rejection of the promise a handler
// returns, is contained to that one message (the link logs it and answers it with a coded error when it
// can), never to the process or the connection.
import type { Logger } from '../base/log';
import type { Inbound } from '../protocol/messages';

/** A handler may answer later: the promise it returns is watched for a rejection, never awaited. */
export type InboundTable = { [T in Inbound['type']]: (m: Extract<Inbound, { type: T }>) => void | Promise<unknown> };

/** What one connection handles itself: it owns the register/heartbeat state and the close reason. */
export interface LinkSession {
  ack(m: Extract<Inbound, { type: 'ack' }>): void;
  /** Returns true when the error ended the connection (auth refused, registration refused). */
  error(m: Extract<Inbound, { type: 'error' }>): boolean;
  unknown(m: Extract<Inbound, { type: 'unknown' }>): void;
}

export interface HubParts {
  relay: {
    inference(m: Extract<Inbound, { type: 'inference' }>): void | Promise<unknown>;
    cancel(m: Extract<Inbound, { type: 'cancel' }>): void;
    resume(m: Extract<Inbound, { type: 'resume' }>): void | Promise<unknown>;
  };
  notices: { receive(payload: unknown): unknown };
  challenges: {
    warmup(m: Extract<Inbound, { type: 'warmup' }>): void | Promise<unknown>;
    verify(m: Extract<Inbound, { type: 'verify' }>): void | Promise<unknown>;
    benchmark(m: Extract<Inbound, { type: 'benchmark' }>): void | Promise<unknown>;
  };
  log: Logger;
}

/**
 * Hands `m` to its handler. A synchronous throw reaches `failed(err, false)` (nothing was answered yet);
 * a rejected promise reaches `failed(err, true)` (the handler may have answered part of it).
 */
export function dispatch(table: InboundTable, m: Inbound, failed: (err: unknown, later: boolean) => void): void {
  let r: void | Promise<unknown>;
  try {
    r = (table[m.type] as (m: Inbound) => void | Promise<unknown>)(m);
  } catch (e) {
    failed(e, false);
    return;
  }
  if (r && typeof (r as Promise<unknown>).then === 'function') (r as Promise<unknown>).then(undefined, (e: unknown) => failed(e, true));
}

/** The table of a connection of the link alone (no relay: e.g. a link under test): session frames only. */
export function sessionTable(session: LinkSession, log: Logger): InboundTable {
  const ignore = (m: Inbound): void => log.debug(`no handler for a hub ${m.type} message on this link`);
  return {
    ack: (m) => session.ack(m),
    error: (m) => void session.error(m),
    unknown: (m) => session.unknown(m),
    inference: ignore,
    cancel: ignore,
    resume: ignore,
    notice: ignore,
    warmup: ignore,
    verify: ignore,
    benchmark: ignore,
  };
}

/** The agent's table: the connection's session frames plus the relay, notices and challenges. */
export function hubTable(session: LinkSession, parts: HubParts): InboundTable {
  return {
    ack: (m) => session.ack(m),
    error: (m) => {
      if (session.error(m)) return;
      parts.log.warn(`hub error${m.requestId ? ` for ${m.requestId}` : ''}: ${m.payload.message ?? String(m.payload.code ?? '')}`, { requestId: m.requestId });
    },
    unknown: (m) => session.unknown(m),
    inference: (m) => parts.relay.inference(m),
    cancel: (m) => parts.relay.cancel(m),
    resume: (m) => parts.relay.resume(m),
    notice: (m) => void parts.notices.receive(m.payload),
    warmup: (m) => parts.challenges.warmup(m),
    verify: (m) => parts.challenges.verify(m),
    benchmark: (m) => parts.challenges.benchmark(m),
  };
}
