// HubRelay: serves the hub's inference requests in the Go provider's dialect (docs/hub-dialect.md):
// request_id in the envelope and payload of every answer, a stream that fails before any data opens
// with an error chunk, refusals on the result paths (never `error` frames), token counts only as the
// engine reported them, and silence after a hub `cancel`.
// Resume-v1 is ours: only when the hub's last register ack carried "extensions": ["resume-v1"] (the
// dev hub) is every stream_chunk / stream_end / result retained (by `seq`, from 1 per request) and
// generation kept going while the link is down; after the next register ack the hub may send
// `resume {request_id, last_seq}` and gets everything after last_seq, once. A request not resumed
// within the grace period (or whose link stays down past the TTL) is cancelled at the engine. Against
// a hub without it (the real one), in-flight requests are aborted at the engine on disconnect, as the
// Go provider does.
import type { Logger } from '../base/log';
import { elapsedMs, monoMs } from '../base/clock';
import { chunkJson } from '../engine-client/sse';
import { encodeOnce, encodeStreamChunk, out, MAX_MESSAGE_BYTES, type EncodedMessage, type Inbound, type Outbound } from '../protocol/messages';
import type { ChunkEvent, InferenceRunner, InferenceResult } from '../inference/runner';
import { Retention, type RetentionCodec } from './retention';
import { networkAnswer } from './network-answer';

/**
 * Kept messages: a data stream_chunk as its chunk JSON only (the envelope, half its bytes, is rebuilt the
 * same by encodeStreamChunk), anything else as its wire text, whose type is its first key (encode() writes it first).
 */
const KEEP_ENCODED: RetentionCodec<EncodedMessage> = {
  text: (m) => m.text,
  short: (m) => m.chunk,
  read: (text, seq, bytes, requestId, short) =>
    short ? encodeStreamChunk(requestId, seq, text) : { type: /^\{"type":"([a-z_]+)"/.exec(text)?.[1] ?? 'message', requestId, seq, text, bytes },
};

/** What the relay needs of the hub link (hub/link.ts HubLink). */
export interface RelayLink {
  /** Registered with the hub now. */
  readonly connected: boolean;
  /** The hub's last register ack offered resume-v1. */
  readonly hubResumes: boolean;
  sendControl(m: Outbound): boolean;
  /** True: handed to the socket; false: the link is down; a promise of either while the socket is backed up. */
  sendData(enc: EncodedMessage): boolean | Promise<boolean>;
  on(event: 'registered' | 'disconnected', listener: () => void): unknown;
}

/** What the relay needs of the engine-call service (inference/runner.ts). */
export type EngineCalls = Pick<InferenceRunner, 'run'>;

export interface HubRelayOptions {
  link: RelayLink;
  runner: EngineCalls;
  log: Logger;
  resumeGraceMs: number;
  resumeTtlMs: number;
  /** Cap on retained bytes across requests (default 64 MB). */
  retentionBytes?: number;
  /** How long a finished request's messages are kept while the link stays up (default 30 s). */
  lingerMs?: number;
  /** Called right before a request's last message (stream_end, result, error) is sent, which waits for
   * the promise it returns: the agent commits the request's ledger row here (the rows of one turn in one
   * transaction), so what the hub is told is never lost. */
  beforeFinal?: (id: string) => void | Promise<void>;
  /** A request's last message was handed to the hub link (now, or replayed on resume). */
  finalSent?: (id: string) => void;
  /** The hub ended a request itself (`cancel`): nothing more goes out, and the hub knows how it ended. */
  hubEnded?: (id: string) => void;
}

/**
 * Where a running request's answer goes:
 * - `live`: the link is up; each message is sent as it is made (and kept too when the hub resumes streams).
 * - `detached`: the link dropped and the hub resumes streams; each message is kept, none sent, until the
 *   hub's `resume` or the grace period's end.
 * - `replaying`: the hub sent `resume`; what was kept is being sent, and messages made meanwhile are kept
 *   for the replay to pick up; then `live`.
 * - `cancelled`: the hub sent `cancel`; nothing more is kept or sent, not even a final message (Go cancel_test.go).
 * - `dropped`: given up (the link dropped and the hub does not resume, no resume within the grace period,
 *   the link down past the TTL, or a message over the size limit); nothing more is kept or sent.
 */
export type Delivery = 'live' | 'detached' | 'replaying' | 'cancelled' | 'dropped';

interface Running {
  readonly ctl: AbortController;
  /** On the monotonic clock (base/clock.ts): latencies never read the wall clock. */
  readonly startedAt: number;
  /** The seq of the last message made for it (1 is the first). */
  seq: number;
  delivery: Delivery;
  /** Its kept answer outgrew the resume buffer's memory cap: cancelled at the engine, it ends with a 507. */
  evicted: boolean;
}

/** Whether nothing more goes out for it. */
function given(a: Running): boolean {
  return a.delivery === 'cancelled' || a.delivery === 'dropped';
}

/** Whether the hub cancelled it (read again after an await: a cancel may come meanwhile). */
function cancelled(a: Running): boolean {
  return a.delivery === 'cancelled';
}

/** Gives a request up (a cancelled one stays cancelled: the hub still hears nothing more). */
function drop(a: Running): void {
  if (a.delivery !== 'cancelled') a.delivery = 'dropped';
}

const NOTHING = (): void => undefined;

export class HubRelay {
  private readonly active = new Map<string, Running>();
  private readonly retention: Retention<EncodedMessage>;
  private graceTimer?: NodeJS.Timeout;
  private ttlTimer?: NodeJS.Timeout;
  private readonly sweeper: NodeJS.Timeout;
  private linkUp = false;
  /** Finished while detached and not yet resumed: dropped when the grace period ends. */
  private readonly detachedFinished = new Set<string>();
  readonly counters = { served: 0, failed: 0, cancelledUnresumed: 0, resumed: 0, replayedMessages: 0, evicted: 0, abortedOnDisconnect: 0, cancelledByHub: 0 };

  constructor(private readonly o: HubRelayOptions) {
    this.retention = new Retention<EncodedMessage>(
      o.retentionBytes ?? 64 * 1024 * 1024,
      (id) => {
        this.counters.evicted++;
        const a = this.active.get(id);
        if (!a) {
          o.log.warn(`request ${id}: its finished answer was dropped from the resume buffer to stay within the memory cap`, { requestId: id });
          return;
        }
        a.evicted = true;
        o.log.error(`request ${id}: its answer outgrew the resume buffer's memory cap; cancelling it at the engine`, { requestId: id });
        a.ctl.abort();
      },
      KEEP_ENCODED,
    );
    o.link.on('disconnected', () => this.onDisconnected());
    o.link.on('registered', () => this.onRegistered());
    this.sweeper = setInterval(() => {
      if (this.linkUp) this.retention.dropFinished(o.lingerMs ?? 30_000);
    }, 5_000);
    this.sweeper.unref();
  }

  get activeCount(): number {
    return this.active.size;
  }

  get retainedBytes(): number {
    return this.retention.bytes;
  }

  get retainedRequests(): number {
    return this.retention.size;
  }

  /** Where a running request's answer goes now (undefined: not running). */
  deliveryOf(id: string): Delivery | undefined {
    return this.active.get(id)?.delivery;
  }

  /** Cancels every running request (used on shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    clearTimeout(this.graceTimer);
    clearTimeout(this.ttlTimer);
    for (const a of this.active.values()) a.ctl.abort();
  }

  /** A hub inference request (routed here by dispatch.ts). */
  inference(msg: Extract<Inbound, { type: 'inference' }>): Promise<void> {
    return this.serve(msg);
  }

  /** The hub's cancel: stop the engine and send nothing more for it (Go cancel_test.go). */
  cancel(msg: Extract<Inbound, { type: 'cancel' }>): void {
    const a = this.active.get(msg.requestId);
    if (!a || a.delivery === 'cancelled') return;
    this.o.log.info(
      `hub cancelled request ${msg.requestId}${msg.reason ? ` (${msg.reason.slice(0, 64)})` : ''}; stopping the engine and sending nothing more for it`,
      { requestId: msg.requestId },
    );
    a.delivery = 'cancelled';
    this.counters.cancelledByHub++;
    this.retention.drop(msg.requestId);
    a.ctl.abort();
  }

  /** resume-v1: everything after last_seq, once. */
  resume(msg: Extract<Inbound, { type: 'resume' }>): Promise<void> {
    return this.replay(msg.requestId, msg.lastSeq);
  }

  private onDisconnected(): void {
    this.linkUp = false;
    clearTimeout(this.graceTimer);
    if (!this.o.link.hubResumes) {
      // The hub never said it resumes: nobody will read these answers. Free the GPU now.
      if (this.active.size > 0) {
        this.o.log.warn(`hub link down and the hub does not resume streams: cancelling ${this.active.size} in-flight request(s) at the engine`);
      }
      for (const [id, a] of this.active) {
        this.counters.abortedOnDisconnect++;
        drop(a);
        a.ctl.abort();
        this.retention.drop(id);
      }
      for (const id of this.retention.ids()) this.retention.drop(id);
      return;
    }
    for (const a of this.active.values()) if (!given(a)) a.delivery = 'detached';
    if (!this.ttlTimer && (this.active.size > 0 || this.retention.size > 0)) {
      this.ttlTimer = setTimeout(() => {
        this.ttlTimer = undefined;
        if (this.linkUp) return;
        this.o.log.warn(`hub link down for ${this.o.resumeTtlMs / 1000} s: cancelling ${this.active.size} request(s) and dropping their answers`);
        for (const a of this.active.values()) {
          drop(a);
          a.ctl.abort();
        }
        for (const id of this.retention.ids()) this.retention.drop(id);
      }, this.o.resumeTtlMs);
      this.ttlTimer.unref();
    }
  }

  private onRegistered(): void {
    this.linkUp = true;
    clearTimeout(this.ttlTimer);
    this.ttlTimer = undefined;
    for (const id of this.retention.ids()) if (this.retention.isFinished(id) && !this.active.has(id)) this.detachedFinished.add(id);
    const waiting = [...this.active.values()].some((a) => a.delivery === 'detached');
    if (!waiting && this.detachedFinished.size === 0) return;
    clearTimeout(this.graceTimer);
    this.graceTimer = setTimeout(() => {
      for (const [id, a] of this.active) {
        if (a.delivery !== 'detached') continue;
        this.counters.cancelledUnresumed++;
        this.o.log.warn(`request ${id}: the hub did not resume it within ${this.o.resumeGraceMs} ms; cancelling the engine request`, { requestId: id });
        a.delivery = 'dropped';
        a.ctl.abort();
        this.retention.drop(id);
      }
      for (const id of this.detachedFinished) this.retention.drop(id);
      this.detachedFinished.clear();
    }, this.o.resumeGraceMs);
  }

  private async replay(id: string, lastSeq: number): Promise<void> {
    const a = this.active.get(id);
    // A request still running with nothing retained yet (the hub asked right after a re-register) has
    // nothing to replay: it just stays attached.
    if (!this.retention.has(id) && !a) {
      this.o.link.sendControl(out.error(id, 410, 'nothing to resume for this request: it was cancelled or finished too long ago'));
      return;
    }
    // While it replays, what the request makes is kept (not sent), so the replay sends everything in order, once.
    if (a && !given(a)) a.delivery = 'replaying';
    this.detachedFinished.delete(id);
    this.counters.resumed++;
    let last = lastSeq;
    for (;;) {
      const batch = this.retention.since(id, last);
      if (batch.length === 0) break;
      for (const m of batch) {
        if (!(await this.o.link.sendData(m))) return; // link dropped again: the next resume continues
        this.counters.replayedMessages++;
        last = m.seq;
      }
    }
    if (a && this.active.get(id) === a) {
      if (a.delivery === 'replaying') a.delivery = 'live';
    } else {
      this.retention.finished(id);
      this.o.finalSent?.(id);
    }
    this.o.log.info(`request ${id} resumed after seq ${lastSeq}`, { requestId: id });
  }

  /** Sends one message of a request (see sendEncoded). */
  private send(id: string, msg: Outbound): boolean | Promise<boolean> {
    // Serialised once: the same text is retained for resume and handed to the socket.
    return this.sendEncoded(id, encodeOnce(msg));
  }

  /**
   * Sends one message of a request, or only keeps it while the request is not live: whether it was
   * handed to the link, or a promise of that while the link is backed up (the caller then waits for it).
   */
  private sendEncoded(id: string, enc: EncodedMessage): boolean | Promise<boolean> {
    const a = this.active.get(id);
    if (!a || given(a)) return false;
    if (enc.bytes > MAX_MESSAGE_BYTES) return this.refuseOversize(id, a, enc);
    // Retained for resume only when the hub resumes; the Go hub does not, so nothing is kept for it.
    if (this.o.link.hubResumes) this.retention.add(id, enc.seq, enc, enc.bytes);
    if (a.delivery !== 'live') return false;
    const took = this.o.link.sendData(enc);
    if (took === false) a.delivery = 'detached';
    if (typeof took === 'boolean') return took;
    return took.then((ok) => {
      if (!ok && a.delivery === 'live') a.delivery = 'detached';
      return ok;
    });
  }

  private async refuseOversize(id: string, a: Running, enc: EncodedMessage): Promise<false> {
    // Oversize: never sent. The request ends in its place, on its result path with status 413 (an error
    // chunk first when nothing was sent yet, as for any failure before data); the engine request is
    // cancelled and nothing after the hole is sent (an answer with a chunk missing must not end as a success).
    const text = `an answer ${enc.type === 'stream_chunk' ? 'chunk' : 'message'} of ${enc.bytes} bytes is over the 1 MB message limit`;
    this.o.log.error(`request ${id}: ${text}; refused it and ended the request`, { requestId: id });
    const seq = enc.seq || a.seq;
    const latencyMs = elapsedMs(a.startedAt);
    const stream = enc.type !== 'ack';
    const ending =
      stream && seq > 1 ? [out.streamEnd(id, seq, { latencyMs, statusCode: 413, error: text })] : out.refusal(id, stream, 413, text, latencyMs, seq);
    a.seq = seq + ending.length - 1;
    for (const m of ending) await this.send(id, m);
    drop(a);
    a.ctl.abort();
    return false;
  }

  private next(id: string): number {
    const a = this.active.get(id)!;
    return ++a.seq;
  }

  private async serve(msg: Extract<Inbound, { type: 'inference' }>): Promise<void> {
    const id = msg.requestId;
    if (this.active.has(id) || this.retention.has(id)) {
      this.o.log.warn(`duplicate inference ${id} ignored (already running or answered)`, { requestId: id });
      return;
    }
    const { model_id: model, request, operation } = msg.payload;
    const stream = msg.payload.stream ?? request.stream === true;
    const quotedId = JSON.stringify(id);
    const a: Running = { ctl: new AbortController(), startedAt: monoMs(), seq: 0, delivery: this.o.link.connected ? 'live' : 'detached', evicted: false };
    this.active.set(id, a);
    // The chunk's JSON as the engine wrote it (model patched), not stringified again.
    const chunk = (ev: ChunkEvent): Promise<void> | undefined => {
      if (ev.emptyChoices && !ev.usage) return undefined;
      const took = this.sendEncoded(id, encodeStreamChunk(id, this.next(id), chunkJson(ev), quotedId));
      return typeof took === 'boolean' ? undefined : took.then(NOTHING);
    };
    let result: InferenceResult;
    try {
      // A cancel or a drop while its admission waits (one per turn) reaches the runner as an aborted signal.
      result = await this.o.runner.run(
        {
          id,
          purpose: 'hub',
          model,
          body: request as Record<string, unknown>,
          stream,
          signal: a.ctl.signal,
          ...(operation !== undefined ? { operation } : {}),
        },
        { chunk },
      );
    } catch (e) {
      result = {
        status: 'error',
        statusCode: 500,
        error: `internal error: ${(e as Error).message}`,
        tokensIn: 0,
        tokensOut: 0,
        estimated: false,
        latencyMs: 0,
      };
    }
    if (a.evicted) {
      result = {
        ...result,
        status: 'error',
        statusCode: 507,
        error: 'the provider dropped this answer: it outgrew the memory kept for resuming streams while the hub link was down',
      };
    }
    try {
      // An operation whose answer is whole (embeddings, images, transcriptions) goes on the result path.
      await this.finish(id, a, result.streamed ?? stream, result);
    } catch (e) {
      // The answer could not be sent as it was (an engine answer that cannot be encoded, …): the request
      // ends on its result path with a coded 500 instead, and nothing else is affected.
      this.o.log.error(`request ${id}: its answer could not be sent: ${(e as Error).message}`, { requestId: id, code: 'answer_failed' });
      await this.finishFailed(id, a, result.streamed ?? stream, `internal error: the answer could not be sent (${(e as Error).message})`).catch((e2: unknown) =>
        this.o.log.error(`request ${id}: could not send its error either: ${(e2 as Error).message}`, { requestId: id }),
      );
    } finally {
      this.retention.finished(id);
      if (a.delivery === 'detached' || a.delivery === 'replaying') this.detachedFinished.add(id);
      this.active.delete(id);
    }
  }

  /** After finish() failed part-way: end the request with a 500 on its result path, once. */
  private async finishFailed(id: string, a: Running, stream: boolean, error: string): Promise<void> {
    if (given(a)) return;
    if (!stream) {
      const m = out.inferenceResult(id, { response: null, statusCode: 500, latencyMs: elapsedMs(a.startedAt), error });
      await this.send(id, { ...m, payload: { ...m.payload, seq: this.next(id) } });
      return;
    }
    if (a.seq === 0) await this.send(id, out.streamErrorChunk(id, this.next(id), error));
    await this.send(id, out.streamEnd(id, this.next(id), { latencyMs: elapsedMs(a.startedAt), statusCode: 500, error }));
  }

  private async finish(id: string, a: Running, stream: boolean, r: InferenceResult): Promise<void> {
    if (r.status === 'ok') this.counters.served++;
    else this.counters.failed++;
    if (cancelled(a)) return this.o.hubEnded?.(id); // the hub abandoned it: nothing more goes out
    // Commit before send: the ledger row is durable before the last message can leave, so nothing the
    // hub was told is missing from the owner's ledger (docs/decisions/0001-commit-before-send.md).
    const committed = this.o.beforeFinal?.(id);
    if (committed) await committed;
    if (cancelled(a)) return this.o.hubEnded?.(id); // cancelled while its row was committed
    const withSeq = (m: Outbound): Outbound => ({ ...m, payload: { ...m.payload, seq: this.next(id) } });
    // The network's words, not the owner's: no engine address, no advice to the owner, 503 for an outage.
    const { statusCode, error } = networkAnswer(r);
    let handed: boolean;
    if (!stream) {
      // Go's InferenceResponse: the engine's JSON on success; on an error or refusal, response null
      // with the status and the error text (refusals take this path too, not an `error` frame).
      const ok = r.status === 'ok';
      const result = out.inferenceResult(id, {
        response: ok ? (r.response ?? null) : null,
        statusCode: ok ? r.statusCode : statusCode,
        latencyMs: r.latencyMs,
        ...(ok ? {} : { error }),
      });
      handed = await this.send(id, withSeq(result));
    } else {
      if (r.status === 'ok') await this.send(id, out.streamChunk(id, this.next(id), null, true));
      // Nothing sent yet: the hub classifies a failed stream from its first chunk, so an error chunk goes first.
      else if (a.seq === 0) await this.send(id, out.streamErrorChunk(id, this.next(id), error));
      handed = await this.send(
        id,
        out.streamEnd(id, this.next(id), {
          latencyMs: r.latencyMs,
          // Token counts only as the engine reported them (per-request pay is tokens x price); none
          // reported (an estimate, or a failure before usage came) leaves them out, as Go's omitempty does.
          ...(r.estimated || (r.tokensIn === 0 && r.tokensOut === 0) ? {} : { tokensIn: r.tokensIn, tokensOut: r.tokensOut }),
          ...(r.status !== 'ok' ? { statusCode, error } : {}),
        }),
      );
    }
    if (handed) this.o.finalSent?.(id);
  }
}
