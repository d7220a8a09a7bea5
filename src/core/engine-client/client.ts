// The engine client: POST an OpenAI-style request to a local engine through the one engine HTTP client
// (http.ts, a kept-alive connection), and hand back either a stream of events pushed to a handler (real
// backpressure: while the handler's promise is pending, the socket stops being read) or the parsed JSON of
// a non-stream answer.
import type http from 'node:http';
import { EngineHttpError, type EngineEndpoint, type EngineRequestOptions, type EngineStreamEvent, type NonStreamResult } from './types';
import { EngineStreamParser } from './sse';
import { describeEngineError } from './engine-error';
import { readTimings, readUsage, withChatUsageNames } from './usage';
import { cancelledError, openEngine, readBody, type EngineBody, type Opened } from './http';
import { transcriptionUpload } from './upload';
import { BoundedJsonError, JSON_LIMITS, parseJson } from '../http/bounded-json';

export { estimateTokens } from './usage';

/**
 * The bounds of every engine call when the caller names none; [Agent] EngineHeadersTimeoutSeconds,
 * EngineIdleTimeoutSeconds and EngineTotalTimeoutSeconds set them (docs/configuration.md).
 * headers: a stream's headers (engines send them before the first token); for a non-stream call, when the
 * engine is told to be suspect (its headers come only with the whole answer). idle: the first byte after a
 * stream's headers, and each next one. total: the whole call, headers and body, stream or not.
 */
export const ENGINE_TIMEOUTS = { headersMs: 60_000, idleMs: 120_000, totalMs: 600_000 } as const;
const MAX_ERROR_BODY = 64 * 1024;
const MAX_JSON_BODY = 32 * 1024 * 1024;

/** Options of streamRequest beyond the shared contract. */
export interface StreamRequestOptions extends EngineRequestOptions {
  /** Fail the stream (error 502, then end) when the engine sends nothing for this long while we wait. */
  idleTimeoutMs?: number;
}

/** Calls onHeadersOverdue once when no headers came in time; cancel() when they did (or the call ended). */
function overdueWatch(opts: EngineRequestOptions, headersMs: number): { cancel(): void } {
  const tell = opts.onHeadersOverdue;
  if (!tell) return { cancel: () => undefined };
  const timer = setTimeout(() => tell(headersMs), headersMs);
  return { cancel: () => clearTimeout(timer) };
}

/**
 * The body to forward: a shallow copy with `local_model` as `model`. Stream: `stream: true` and
 * `stream_options.include_usage: true` (other stream options kept). Non-stream: no stream options.
 */
export function prepareBody(body: Record<string, unknown>, endpoint: EngineEndpoint, stream: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body };
  if (endpoint.localModel) out.model = endpoint.localModel;
  if (stream) {
    const given = body.stream_options;
    out.stream = true;
    out.stream_options = { ...(given && typeof given === 'object' && !Array.isArray(given) ? given : {}), include_usage: true };
  } else {
    if ('stream' in out) out.stream = false;
    delete out.stream_options;
  }
  return out;
}

async function httpError(res: http.IncomingMessage, base: string): Promise<EngineHttpError> {
  const status = res.statusCode ?? 502;
  const fallback = `the engine at ${base} answered ${status} ${res.statusMessage ?? ''}`.trim();
  let text = '';
  try {
    text = await readBody(res, MAX_ERROR_BODY);
  } catch {
    return new EngineHttpError(fallback, status);
  }
  let body: unknown = text;
  try {
    body = parseJson(text, JSON_LIMITS.engine);
  } catch {
    // not JSON: keep the text when it is short and not an HTML page
  }
  const plain = typeof body === 'string' && (body.length > 300 || /^\s*</.test(body)) ? undefined : body;
  const message = describeEngineError(plain).message ?? fallback;
  return new EngineHttpError(message, status, body === '' ? undefined : body);
}

/**
 * Sends the request (a kept-alive connection) and resolves with a 2xx response; otherwise rejects with
 * EngineHttpError (engine status + message; 502 unreachable; 504 no answer in time; 499 cancelled).
 * The timer runs until `done()` is called (so non-stream callers can cover the body too).
 */
async function send(opts: EngineRequestOptions, body: EngineBody, accept: string, timeoutMs: number): Promise<Opened> {
  const sent = await openEngine({
    url: opts.endpoint.url,
    path: opts.path,
    method: 'POST',
    body,
    accept,
    timeoutMs,
    keepAlive: true,
    ...(opts.endpoint.apiKey ? { apiKey: opts.endpoint.apiKey } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const status = sent.res.statusCode ?? 0;
  if (status >= 200 && status < 300) return sent;
  try {
    throw await httpError(sent.res, sent.base);
  } finally {
    sent.done();
  }
}

/** The handler of a streaming answer's events (EngineStream.consume). */
export type EngineEventHandler = (ev: EngineStreamEvent) => void | Promise<void>;

/** A streaming answer, handed to one handler. */
export interface EngineStream {
  /**
   * Hands every event, the final 'end' included, to `handler` from the response's own 'data' callback: no
   * promise and no microtask hop per event (the relay's hot path). A promise the handler returns pauses
   * reading until it settles. Resolves once 'end' was handled; when the handler throws or its promise
   * rejects, the connection is closed and the promise rejects. A stream is consumed once.
   */
  consume(handler: EngineEventHandler): Promise<void>;
  /** Stops reading and closes the connection (the engine stops generating). */
  close(): void;
}

interface Pusher {
  handler: EngineEventHandler;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** The handler's promise for the last event has not settled yet. */
  waiting: boolean;
}

/**
 * The events of a streaming response, in one layer: the socket's 'data' feeds the SSE parser and the
 * handler is handed what it produced. While the handler's promise is pending the response is paused, so
 * the engine is read no faster than the consumer takes events (the socket's own buffer then fills and TCP
 * backpressure reaches the engine). An idle timer fails an engine that sends nothing while the handler
 * waits for it. A read error caused by our own abort is a cancellation (499), not an engine failure.
 */
class EngineEvents implements EngineStream {
  private readonly parser: EngineStreamParser;
  private readonly queue: EngineStreamEvent[];
  private head = 0;
  private pusher: Pusher | undefined;
  private pushing = false;
  private paused = false;
  private done = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly totalTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sent: Opened,
    completions: boolean,
    private readonly signal: AbortSignal | undefined,
    idleMs: number | undefined,
    /** What is left of the call's total bound once headers came (undefined: none). */
    totalLeftMs?: number,
  ) {
    this.parser = new EngineStreamParser({ completions });
    this.queue = this.parser.queue;
    const res = sent.res;
    this.timer =
      idleMs && idleMs > 0
        ? setTimeout(() => {
            if (this.pusher && !this.pusher.waiting && !this.parser.closed) res.destroy(new Error(`the engine at ${sent.base} sent nothing for ${idleMs} ms`));
            else this.timer?.refresh();
          }, idleMs)
        : undefined;
    // The whole stream's bound: an engine that keeps trickling bytes forever still ends.
    this.totalTimer =
      totalLeftMs !== undefined
        ? setTimeout(
            () => res.destroy(new Error(`the engine at ${sent.base} did not finish its answer within the total time allowed`)),
            Math.max(1, totalLeftMs),
          )
        : undefined;
    res.on('data', this.onData);
    res.once('end', this.onEnd);
    res.once('error', this.onError);
    res.once('close', this.onClose);
  }

  consume(handler: EngineEventHandler): Promise<void> {
    if (this.pusher || this.done) return Promise.reject(new Error('this engine stream is already being read'));
    return new Promise<void>((resolve, reject) => {
      this.pusher = { handler, resolve, reject, waiting: false };
      this.push(this.pusher);
      if (!this.pusher.waiting) this.resume();
    });
  }

  close(): void {
    this.stop();
    const p = this.pusher;
    if (p && !p.waiting) {
      p.waiting = true; // nothing more is handed to it
      p.resolve();
    }
  }

  /** Nothing more is read or handed on; the connection is closed when the answer did not fully arrive. */
  private stop(): void {
    this.finish();
    this.parser.closed = true;
    this.head = this.queue.length;
  }

  private take(): EngineStreamEvent {
    const ev = this.queue[this.head++] as EngineStreamEvent;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    // A read error caused by our own abort is a cancellation, not an engine failure.
    if (ev.type === 'error' && this.signal?.aborted)
      return { type: 'error', message: `the request to the engine at ${this.sent.base} was cancelled`, statusCode: 499 };
    return ev;
  }

  /** Events to the handler; before there is one, the response is paused while events wait. */
  private deliver(): void {
    if (this.pusher) this.push(this.pusher);
    else if (this.head < this.queue.length) this.pause();
  }

  /** Every queued event to the handler, until one returns a promise (then paused until it settles). */
  private push(p: Pusher): void {
    // A handler that makes the response end or fail synchronously comes back here: the outer loop goes on.
    if (this.pushing) return;
    this.pushing = true;
    try {
      this.pushQueued(p);
    } finally {
      this.pushing = false;
    }
    if (!p.waiting && this.parser.closed && this.head >= this.queue.length && !this.done) {
      this.finish();
      p.resolve();
    }
  }

  private pushQueued(p: Pusher): void {
    while (!p.waiting && this.head < this.queue.length) {
      let pending: void | Promise<void>;
      try {
        pending = p.handler(this.take());
      } catch (e) {
        this.abandon(p, e);
        return;
      }
      if (!pending) continue;
      p.waiting = true;
      this.pause();
      pending.then(
        () => {
          p.waiting = false;
          this.resume();
          this.push(p);
        },
        (e: unknown) => this.abandon(p, e),
      );
      return;
    }
  }

  /** The handler failed: stop reading (closing the connection) and reject consume(). */
  private abandon(p: Pusher, e: unknown): void {
    p.waiting = true; // nothing more is handed to it
    this.stop();
    p.reject(e);
  }

  private pause(): void {
    if (this.paused || this.parser.closed) return;
    this.paused = true;
    this.sent.res.pause();
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.sent.res.resume();
  }

  private readonly onData = (bytes: Buffer): void => {
    if (this.parser.closed) return;
    this.timer?.refresh();
    this.parser.feed(bytes);
    if (this.parser.overflow) this.parser.close();
    this.deliver();
  };

  private readonly onEnd = (): void => {
    this.parser.close();
    this.deliver();
  };

  private readonly onError = (e: Error): void => {
    this.parser.close(true, e);
    this.deliver();
  };

  /** Closed before 'end' without an error (destroyed): the body broke off, as a stream iterator says it. */
  private readonly onClose = (): void => {
    if (!this.parser.closed) this.parser.close(true, new Error('Premature close'));
    this.deliver();
  };

  /** Once: timers and listeners off, the connection closed when the answer did not fully arrive. */
  private finish(): void {
    if (this.done) return;
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.totalTimer) clearTimeout(this.totalTimer);
    const res = this.sent.res;
    res.off('data', this.onData);
    res.off('end', this.onEnd);
    res.off('error', this.onError);
    res.off('close', this.onClose);
    this.sent.done();
    if (!res.complete) this.sent.req.destroy(); // stopped early: close the socket so the engine stops
  }
}

/**
 * Start a streaming request. Resolves when the engine answered 2xx with headers; consume() then hands
 * chunk/error events and one final 'end' to a handler. opts.signal aborts at any time.
 */
export async function streamRequest(opts: StreamRequestOptions): Promise<EngineStream> {
  const body = prepareBody(opts.body, opts.endpoint, true);
  const startedAt = performance.now();
  const totalMs = opts.totalTimeoutMs ?? ENGINE_TIMEOUTS.totalMs;
  const headersMs = Math.min(opts.headersTimeoutMs ?? ENGINE_TIMEOUTS.headersMs, totalMs);
  let sent: Opened;
  try {
    sent = await send(opts, { json: body }, 'text/event-stream', headersMs);
  } catch (e) {
    // No headers in time: the engine may be frozen (a stopped process still accepts connections).
    if (e instanceof EngineHttpError && e.statusCode === 504 && e.body === undefined && !opts.signal?.aborted) opts.onHeadersOverdue?.(headersMs);
    throw e;
  }
  // The headers timer only covers the wait for headers; the abort listener stays until the stream ends.
  const signal = opts.signal;
  // No error argument: once the answer has fully arrived nobody listens for the request's errors any
  // more, and an error here would be unhandled. Closing the socket is all that is needed; the reader
  // sees the stream end and the caller's aborted signal says why.
  sent.req.on('error', () => {});
  const onAbort = () => sent.req.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  sent.done();
  const done = sent.done;
  sent.done = () => {
    done();
    signal?.removeEventListener('abort', onAbort);
  };
  return new EngineEvents(
    sent,
    opts.path === '/v1/completions',
    signal,
    opts.idleTimeoutMs ?? ENGINE_TIMEOUTS.idleMs,
    totalMs - (performance.now() - startedAt),
  );
}

/**
 * A non-stream request: the engine's JSON and its usage, or EngineHttpError. A transcription goes as the
 * multipart upload engines take (the hub sends it as JSON with the file in base64); a usage block in
 * input/output names gets the chat names too, so it is never read (and billed) as zero tokens.
 */
export async function requestJson(opts: EngineRequestOptions): Promise<NonStreamResult> {
  const prepared = prepareBody(opts.body, opts.endpoint, false);
  const body: EngineBody = opts.path === '/v1/audio/transcriptions' ? transcriptionUpload(prepared) : { json: prepared };
  // The total bound covers headers and body; the headers deadline only says the engine may be frozen.
  const totalMs = opts.totalTimeoutMs ?? ENGINE_TIMEOUTS.totalMs;
  const overdue = overdueWatch(opts, Math.min(opts.headersTimeoutMs ?? ENGINE_TIMEOUTS.headersMs, totalMs));
  let sent: Opened;
  try {
    sent = await send(opts, body, 'application/json', totalMs);
  } finally {
    overdue.cancel();
  }
  let text: string;
  try {
    text = await readBody(sent.res, MAX_JSON_BODY);
  } catch (e) {
    if (e instanceof EngineHttpError) throw e;
    if (opts.signal?.aborted) throw cancelledError(sent.base);
    if (sent.timedOut())
      throw new EngineHttpError(`the engine at ${sent.base} did not finish its answer in time`, 504, undefined, undefined, sent.res.statusCode);
    throw new EngineHttpError(
      `the engine at ${sent.base} broke off its answer (${e instanceof Error ? e.message : String(e)})`,
      502,
      undefined,
      undefined,
      sent.res.statusCode,
    );
  } finally {
    sent.done();
  }
  let json: unknown;
  try {
    json = parseJson(text, JSON_LIMITS.engine);
  } catch (e) {
    // Too deep, too large or too many keys: refused before anything walks it (bounded-json.ts).
    if (e instanceof BoundedJsonError && e.code !== 'not_json')
      throw new EngineHttpError(`the engine at ${sent.base} sent an answer that was refused: ${e.message}`, 502, undefined, undefined, sent.res.statusCode);
    // Plain text is a real answer of a transcription asked with response_format "text".
    if (opts.path === '/v1/audio/transcriptions') return { statusCode: sent.res.statusCode ?? 200, json: { text } };
    throw new EngineHttpError(
      `the engine at ${sent.base} answered with something that is not JSON: ${text.slice(0, 80)}`,
      502,
      text,
      undefined,
      sent.res.statusCode,
    );
  }
  json = withChatUsageNames(json);
  const obj = json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  const usage = readUsage(obj.usage) ?? readTimings(obj.timings);
  const result: NonStreamResult = { statusCode: sent.res.statusCode ?? 200, json };
  if (usage) result.usage = usage;
  return result;
}
