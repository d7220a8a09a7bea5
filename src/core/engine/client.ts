// The engine client: POST an OpenAI-style request to a local engine over node:http(s) with a keep-alive
// agent, and hand back either a stream of events (real backpressure: while the consumer does not take
// them, the socket stops being read) or the parsed JSON of a non-stream answer.
import http from 'node:http';
import https from 'node:https';
import { EngineHttpError, type EngineEndpoint, type EngineRequestOptions, type EngineStreamEvent, type NonStreamResult } from './types';
import { EngineStreamParser } from './sse';
import { describeEngineError } from './engine-error';
import { readTimings, readUsage } from './usage';
import { normalizeBaseUrl } from './url';
import { BoundedJsonError, JSON_LIMITS, parseJson } from '../http/bounded-json';

export { estimateTokens } from './usage';

const httpAgent = new http.Agent({ keepAlive: true, keepAliveMsecs: 1000 });
const httpsAgent = new https.Agent({ keepAlive: true, keepAliveMsecs: 1000 });

/** Default wait for response headers of a stream (engines send them before the first token). */
export const STREAM_HEADERS_TIMEOUT_MS = 60_000;
/** Default wait for a whole non-stream answer (the engine answers only when generation is done). */
export const JSON_TIMEOUT_MS = 300_000;
const MAX_ERROR_BODY = 64 * 1024;
const MAX_JSON_BODY = 32 * 1024 * 1024;

/** Options of streamRequest beyond the shared contract. */
export interface StreamRequestOptions extends EngineRequestOptions {
  /** Fail the stream (error 502, then end) when the engine sends nothing for this long while we wait. */
  idleTimeoutMs?: number;
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

function cancelled(base: string): EngineHttpError {
  return new EngineHttpError(`the request to the engine at ${base} was cancelled`, 499);
}

/** Read a response body up to `limit` bytes. */
async function readText(res: http.IncomingMessage, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const c of res) {
    size += (c as Buffer).length;
    if (size > limit) {
      res.destroy();
      throw new EngineHttpError(`the engine answer is larger than ${limit} bytes`, 502);
    }
    parts.push(c as Buffer);
  }
  return Buffer.concat(parts).toString('utf8');
}

async function httpError(res: http.IncomingMessage, base: string): Promise<EngineHttpError> {
  const status = res.statusCode ?? 502;
  const fallback = `the engine at ${base} answered ${status} ${res.statusMessage ?? ''}`.trim();
  let text = '';
  try {
    text = await readText(res, MAX_ERROR_BODY);
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

interface Sent {
  res: http.IncomingMessage;
  req: http.ClientRequest;
  base: string;
  /** Remove the abort listener and timer. */
  done: () => void;
  /** The timer fired (504). */
  timedOut: () => boolean;
}

/**
 * Send the request and resolve with a 2xx response; otherwise reject with EngineHttpError
 * (engine status + message; 502 unreachable; 504 no answer in time; 499 cancelled).
 * The timer runs until `done()` is called (so non-stream callers can cover the body too).
 */
function send(opts: EngineRequestOptions, body: Record<string, unknown>, accept: string, timeoutMs: number, retry = true): Promise<Sent> {
  let base: string;
  try {
    base = normalizeBaseUrl(opts.endpoint.url);
  } catch (e) {
    return Promise.reject(new EngineHttpError(`the engine address "${opts.endpoint.url}" is not usable: ${(e as Error).message}`, 502));
  }
  const url = new URL(base + opts.path);
  const payload = Buffer.from(JSON.stringify(body));
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': payload.length, accept };
  if (opts.endpoint.apiKey) headers.authorization = `Bearer ${opts.endpoint.apiKey}`;
  const secure = url.protocol === 'https:';
  const signal = opts.signal;

  return new Promise<Sent>((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled(base));
    const req = (secure ? https : http).request(url, { method: 'POST', agent: secure ? httpsAgent : httpAgent, headers });
    let settled = false;
    let gotResponse = false;
    let timedOut = false;
    const onAbort = () => req.destroy(cancelled(base));
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new EngineHttpError(`the engine at ${base} did not answer within ${Math.round(timeoutMs / 100) / 10} s`, 504));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const fail = (e: EngineHttpError) => {
      done();
      if (!settled) {
        settled = true;
        reject(e);
      }
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      // A kept-alive socket the engine already closed: try once on a fresh one, as Node's docs advise.
      if (retry && !gotResponse && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        done();
        settled = true;
        send(opts, body, accept, timeoutMs, false).then(resolve, reject);
        return;
      }
      if (err instanceof EngineHttpError) return fail(err);
      fail(new EngineHttpError(`could not reach the engine at ${base} (${err.code ?? err.message}); check that it is running`, 502, undefined, err.code ?? 'ECONNRESET'));
    });
    req.on('response', (res) => {
      gotResponse = true;
      res.on('error', () => undefined); // surfaced through reading; never an uncaught 'error'
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        settled = true;
        resolve({ res, req, base, done, timedOut: () => timedOut });
        return;
      }
      httpError(res, base).then(fail, () => fail(new EngineHttpError(`the engine at ${base} answered ${status}`, status)));
    });
    req.end(payload);
  });
}

/** Push consumer of an EngineStream (consume()). */
export type EngineEventHandler = (ev: EngineStreamEvent) => void | Promise<void>;

/** A streaming answer: pulled (`for await`, next()) or pushed to a handler (consume()), never both. */
export interface EngineStream extends AsyncGenerator<EngineStreamEvent, void, undefined> {
  /**
   * Hands every event, the final 'end' included, to `handler` from the response's own 'data' callback: no
   * promise and no microtask hop per event (the relay's hot path). A promise the handler returns pauses
   * reading until it settles, the same backpressure as not pulling. Resolves once 'end' was handled;
   * when the handler throws or its promise rejects, the connection is closed and the promise rejects.
   */
  consume(handler: EngineEventHandler): Promise<void>;
}

interface Pusher {
  handler: EngineEventHandler;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** The handler's promise for the last event has not settled yet. */
  waiting: boolean;
}

/**
 * The events of a streaming response, in one layer: the socket's 'data' feeds the SSE parser, next()
 * takes the events or consume() is handed them. While events wait untaken the response is paused, so the
 * engine is read no faster than the consumer takes them (the socket's own buffer then fills and TCP
 * backpressure reaches the engine).
 * An idle timer fails an engine that sends nothing while the consumer waits for it. A read error caused by our own
 * abort is a cancellation (499), not an engine failure. Ending early (return(), a `break`) closes the
 * connection so the engine stops.
 */
class EngineEvents implements EngineStream {
  private readonly parser: EngineStreamParser;
  private readonly queue: EngineStreamEvent[];
  private head = 0;
  private waiter: ((r: IteratorResult<EngineStreamEvent, void>) => void) | undefined;
  private pusher: Pusher | undefined;
  private pushing = false;
  private paused = false;
  private done = false;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sent: Sent,
    completions: boolean,
    private readonly signal: AbortSignal | undefined,
    idleMs: number | undefined,
  ) {
    this.parser = new EngineStreamParser({ completions });
    this.queue = this.parser.queue;
    const res = sent.res;
    this.timer =
      idleMs && idleMs > 0
        ? setTimeout(() => {
            if (this.awaitingEngine() && !this.parser.closed) res.destroy(new Error(`the engine at ${sent.base} sent nothing for ${idleMs} ms`));
            else this.timer?.refresh();
          }, idleMs)
        : undefined;
    res.on('data', this.onData);
    res.once('end', this.onEnd);
    res.once('error', this.onError);
    res.once('close', this.onClose);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  consume(handler: EngineEventHandler): Promise<void> {
    if (this.pusher || this.waiter || this.done) return Promise.reject(new Error('this engine stream is already being read'));
    return new Promise<void>((resolve, reject) => {
      this.pusher = { handler, resolve, reject, waiting: false };
      this.deliver();
    });
  }

  next(): Promise<IteratorResult<EngineStreamEvent, void>> {
    if (this.pusher) return Promise.reject(new Error('this engine stream is handed to consume()'));
    if (this.head < this.queue.length) return Promise.resolve({ value: this.take(), done: false });
    if (this.parser.closed) {
      this.finish();
      return Promise.resolve({ value: undefined, done: true });
    }
    if (this.paused) {
      this.paused = false;
      this.sent.res.resume();
    }
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** As a finished generator does: ends the stream (closing the connection) and rethrows. */
  throw(e: unknown): Promise<IteratorResult<EngineStreamEvent, void>> {
    void this.return();
    return Promise.reject(e);
  }

  return(): Promise<IteratorResult<EngineStreamEvent, void>> {
    this.finish();
    this.parser.closed = true;
    this.head = this.queue.length;
    return Promise.resolve({ value: undefined, done: true });
  }

  /** The consumer waits for the engine (a pending next(), or consume() not held by its handler): the idle timer counts. */
  private awaitingEngine(): boolean {
    return this.waiter !== undefined || (this.pusher !== undefined && !this.pusher.waiting);
  }

  private take(): EngineStreamEvent {
    const ev = this.queue[this.head++] as EngineStreamEvent;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    // A read error caused by our own abort is a cancellation, not an engine failure.
    if (ev.type === 'error' && this.signal?.aborted) return { type: 'error', message: `the request to the engine at ${this.sent.base} was cancelled`, statusCode: 499 };
    return ev;
  }

  /** Hands events on: to the push handler (consume), or the next one to a waiting next(); pauses the response while events wait untaken. */
  private deliver(): void {
    if (this.pusher) return this.push(this.pusher);
    const w = this.waiter;
    if (w && this.head < this.queue.length) {
      this.waiter = undefined;
      w({ value: this.take(), done: false });
    } else if (w && this.parser.closed) {
      this.waiter = undefined;
      this.finish();
      w({ value: undefined, done: true });
    }
    if (this.head < this.queue.length) this.pause();
  }

  /** consume(): every queued event to the handler, until one returns a promise (then paused until it settles). */
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
          if (this.paused) {
            this.paused = false;
            this.sent.res.resume();
          }
          this.deliver();
        },
        (e: unknown) => this.abandon(p, e),
      );
      return;
    }
  }

  /** The push handler failed: stop reading (closing the connection) and reject consume(). */
  private abandon(p: Pusher, e: unknown): void {
    p.waiting = true; // nothing more is handed to it
    void this.return();
    p.reject(e);
  }

  private pause(): void {
    if (this.paused || this.parser.closed) return;
    this.paused = true;
    this.sent.res.pause();
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
 * Start a streaming request. Resolves when the engine answered 200 with headers; the stream then gives
 * chunk/error events and one final 'end'. Iterate it to the end or break/return() (which closes the
 * connection), or hand it to consume(). opts.signal aborts at any time.
 */
export async function streamRequest(opts: StreamRequestOptions): Promise<EngineStream> {
  const body = prepareBody(opts.body, opts.endpoint, true);
  const sent = await send(opts, body, 'text/event-stream', opts.headersTimeoutMs ?? STREAM_HEADERS_TIMEOUT_MS);
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
  return new EngineEvents(sent, opts.path === '/v1/completions', signal, opts.idleTimeoutMs);
}

/** A non-stream request: the engine's JSON and its usage, or EngineHttpError. */
export async function requestJson(opts: EngineRequestOptions): Promise<NonStreamResult> {
  const body = prepareBody(opts.body, opts.endpoint, false);
  const sent = await send(opts, body, 'application/json', opts.headersTimeoutMs ?? JSON_TIMEOUT_MS);
  let text: string;
  try {
    text = await readText(sent.res, MAX_JSON_BODY);
  } catch (e) {
    if (e instanceof EngineHttpError) throw e;
    if (opts.signal?.aborted) throw cancelled(sent.base);
    if (sent.timedOut()) throw new EngineHttpError(`the engine at ${sent.base} did not finish its answer in time`, 504);
    throw new EngineHttpError(`the engine at ${sent.base} broke off its answer (${e instanceof Error ? e.message : String(e)})`, 502);
  } finally {
    sent.done();
  }
  let json: unknown;
  try {
    json = parseJson(text, JSON_LIMITS.engine);
  } catch (e) {
    // Too deep, too large or too many keys: refused before anything walks it (bounded-json.ts).
    if (e instanceof BoundedJsonError && e.code !== 'not_json') throw new EngineHttpError(`the engine at ${sent.base} sent an answer that was refused: ${e.message}`, 502);
    throw new EngineHttpError(`the engine at ${sent.base} answered with something that is not JSON: ${text.slice(0, 80)}`, 502, text);
  }
  const obj = json && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  const usage = readUsage(obj.usage) ?? readTimings(obj.timings);
  const result: NonStreamResult = { statusCode: sent.res.statusCode ?? 200, json };
  if (usage) result.usage = usage;
  return result;
}
