// InferenceRunner: the one engine-call service. Every call the agent makes to an engine comes here with
// its purpose (purpose.ts: hub, gateway, the console's test prompt, warmup and Ollama's load, verify,
// benchmark, the deep health probe, Ollama's pull) and gets the same pipeline, with what differs read from
// the purpose's row of the policy table:
//   operation (operations.ts: declared, the model's category, the body's shape) -> admission (a scheduler
//   lease for the model, with the turn pacer; or a slot on the one endpoint a probe must reach) -> the
//   engine call on the lease's endpoint, through the one engine HTTP client (key, abort signal, timeouts)
//   -> on failure before any byte left: trouble reported to health, failover to another endpoint, or one
//   retry of a transient failure -> chunks to the caller's sink (awaited: backpressure) -> usage (engine-
//   reported, or estimated and marked) -> RequestBook (console) -> ledger (via the book).
import crypto from 'node:crypto';
import { EngineHttpError, type EngineEndpoint, type EnginePath, type EngineStreamEvent, type NonStreamResult, type TokenUsage } from '../engine-client/types';
import { ENGINE_TIMEOUTS, estimateTokens, requestJson, streamRequest } from '../engine-client/client';
import { openEngine, type EngineBody, type Opened } from '../engine-client/http';
import { SchedulerRejection, type AdmitOptions, type Lease } from '../scheduler/types';
import type { RequestSource } from '../../shared/types';
import type { Logger } from '../base/log';
import { elapsedMs, monoMs } from '../base/clock';
import type { RequestBook } from './requests';
import type { ModelRegistry } from '../models/registry';
import { POLICY, type Purpose, type PurposePolicy } from './purpose';
import { enginePath, resolveOperation, streams, type Operation } from './operations';

export type ChunkEvent = Extract<EngineStreamEvent, { type: 'chunk' }>;

export interface InferenceRequest {
  /** The caller's id (the hub's request id, the gateway's); made up, with the purpose's label, when absent. */
  id?: string;
  purpose: Purpose;
  /** The lane of whoever asked, for purposes that wait in the caller's (warmup). */
  lane?: RequestSource;
  /** The hub-facing model id. */
  model: string;
  body: Record<string, unknown>;
  /** Asked to stream; only chat and text completions do (other answers come back whole). */
  stream: boolean;
  signal: AbortSignal;
  /** What the request asks (the hub's `operation`, or the caller's route); resolved when absent. */
  operation?: unknown;
  /** An engine path that is no OpenAI operation (Ollama's /api/generate load call). */
  path?: EnginePath;
  /** The one endpoint the call must reach (purposes admitted per endpoint: the deep health probe). */
  target?: EngineEndpoint;
  /** Longest a whole call may take (default: the service's total bound, [Agent] EngineTotalTimeoutSeconds). */
  timeoutMs?: number;
  /**
   * Run even when every slot of the named endpoint is taken (purposes admitted per endpoint): the check of an
   * endpoint under suspicion, whose slots may be held by the very calls that hang.
   */
  overCap?: boolean;
}

export interface InferenceSink {
  accepted?(queuePosition: number): void;
  /** Each engine chunk. A returned promise is awaited: a slow consumer slows reading from the engine. */
  chunk?(ev: ChunkEvent): Promise<void> | void;
}

export interface InferenceResult {
  status: 'ok' | 'error' | 'cancelled' | 'rejected';
  statusCode: number;
  error?: string;
  /** Seed 003 error kind, for the local gateway. */
  kind?: 'invalid' | 'model_not_loaded' | 'rejected' | 'cancelled' | 'internal';
  retryAfterMs?: number;
  tokensIn: number;
  tokensOut: number;
  estimated: boolean;
  latencyMs: number;
  finishReason?: string;
  /** Non-stream: the engine's JSON answer. */
  response?: unknown;
  /** Whether the answer was streamed (a request that asked to stream an embedding is answered whole). */
  streamed?: boolean;
  /** The operation it was sent as (undefined: an engine path of its own, or refused before). */
  operation?: Operation;
  /** The engine's own HTTP status when it answered with an error (before any client mapping). */
  engineStatus?: number;
  /** No answer came from the engine: the socket's code (ECONNREFUSED…) or 'timeout'. */
  noAnswer?: string;
}

export interface RunnerDeps {
  registry: ModelRegistry;
  /** A scheduler lease for the model (limits, queue, pause, health, the turn pacer). */
  admit(model: string, opts: AdmitOptions): Promise<Lease>;
  /** A slot on one endpoint, now or never (undefined: it is busy); absent: such calls take no slot. */
  admitOn?(url: string): Lease | undefined;
  book: RequestBook;
  log: Logger;
  /**
   * The bounds of every engine call (engine/client.ts ENGINE_TIMEOUTS when absent): a stream's headers (and the
   * point where any call's missing headers make the endpoint suspect), the next byte of a stream, the whole call.
   */
  headersTimeoutMs?: number;
  idleTimeoutMs?: number;
  totalTimeoutMs?: number;
  /** Pause before the one retry of a transient failure (default 100 ms). */
  retryDelayMs?: number;
  /**
   * A real request found the engine gone ('down': connection refused), refusing our key, or lost its
   * connection ('suspect': probe it now, it is down if the probe is refused too).
   */
  onEngineTrouble?(url: string, condition: EngineTrouble, error: string): void;
}

/**
 * What a real call found: 'down' (connection refused), 'key_rejected', 'suspect' (a lost connection: probe it
 * now), 'unresponsive' (no headers within the headers deadline: a frozen engine still accepts connections,
 * so no new request should go there until a check says it answers).
 */
export type EngineTrouble = 'down' | 'key_rejected' | 'suspect' | 'unresponsive';

/** What hub and gateway clients are told when the engine refuses the provider's own engine key. */
export const ENGINE_KEY_REJECTED = "engine rejected the provider's key";

/** A generation of the agent's own (generate()) that did not succeed: the status and error it ended with. */
export class EngineCallError extends EngineHttpError {
  constructor(readonly result: InferenceResult) {
    super(result.error ?? result.status, result.statusCode, result.response);
    this.name = 'EngineCallError';
  }
}

/** Thrown out of stream() when the request was cancelled after data flowed: carries what was delivered. */
class Cancelled extends Error {
  constructor(readonly partial: Omit<InferenceResult, 'latencyMs'>) {
    super('cancelled');
  }
}

type Partial_ = Omit<InferenceResult, 'latencyMs'>;

interface Call {
  id: string;
  req: InferenceRequest;
  policy: PurposePolicy;
  path: EnginePath;
  operation?: Operation;
  stream: boolean;
}

/** A failure the Go node retries once before any byte reached the hub: a 502, a refused or reset connection. */
function transient(e: unknown): boolean {
  if (!(e instanceof EngineHttpError)) return false;
  if (e.unreachable) return ['ECONNREFUSED', 'ECONNRESET', 'EPIPE'].includes(e.unreachable);
  return e.statusCode === 502;
}

function promptText(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  return JSON.stringify(body.messages ?? body.prompt ?? body.input ?? '');
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

export class InferenceRunner {
  /** Calls under way, by purpose (the console allows a few test prompts at once). */
  private readonly running: Record<Purpose, number> = {
    hub: 0,
    gateway: 0,
    try: 0,
    warmup: 0,
    'ollama-load': 0,
    verify: 0,
    benchmark: 0,
    health: 0,
    'ollama-pull': 0,
    'ollama-unload': 0,
  };

  constructor(private readonly deps: RunnerDeps) {}

  /** How many calls of this purpose are under way. */
  inFlight(purpose: Purpose): number {
    return this.running[purpose];
  }

  /**
   * The agent's own non-streaming calls (warmup, Ollama's load, verify, benchmark, the health probe): the
   * same pipeline as run(); the engine's JSON and the usage it reported, or an EngineCallError (an
   * EngineHttpError with the status the call ended with).
   */
  async generate(g: Omit<InferenceRequest, 'stream' | 'signal'> & { signal?: AbortSignal }): Promise<NonStreamResult> {
    const r = await this.run({ ...g, stream: false, signal: g.signal ?? new AbortController().signal });
    if (r.status !== 'ok') throw new EngineCallError({ ...r });
    const out: NonStreamResult = { statusCode: r.statusCode, json: r.response };
    const usage: TokenUsage = { promptTokens: r.tokensIn, completionTokens: r.tokensOut };
    if (!r.estimated && (usage.promptTokens || usage.completionTokens)) out.usage = usage;
    return out;
  }

  /**
   * A call whose answer is not an OpenAI response (Ollama's NDJSON pull): the purpose's policy, the engine
   * key and the abort signal, and the raw response (any status) for the caller to read.
   */
  async open(o: { purpose: Purpose; target: EngineEndpoint; path: string; body: EngineBody; signal: AbortSignal; timeoutMs: number }): Promise<Opened> {
    const { purpose, target, path, body, signal, timeoutMs } = o;
    if (POLICY[purpose].admission !== 'none') throw new Error(`a ${purpose} call is admitted: use run()`);
    this.running[purpose]++;
    const opened = openEngine({
      url: target.url,
      path,
      method: 'POST',
      body,
      signal,
      timeoutMs,
      keepAlive: false,
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
    });
    try {
      const o = await opened;
      o.res.once('close', () => this.running[purpose]--);
      return o;
    } catch (e) {
      this.running[purpose]--;
      throw e;
    }
  }

  async run(req: InferenceRequest, sink: InferenceSink = {}): Promise<InferenceResult> {
    this.running[req.purpose]++;
    try {
      return await this.pipeline(req, sink);
    } finally {
      this.running[req.purpose]--;
    }
  }

  private async pipeline(req: InferenceRequest, sink: InferenceSink): Promise<InferenceResult> {
    const policy = POLICY[req.purpose];
    const id = req.id ?? (policy.label ? `${policy.label}-${crypto.randomUUID()}` : crypto.randomUUID());
    const operation = req.path ? undefined : resolveOperation(req.operation, this.deps.registry.get(req.model)?.entry?.category, req.body);
    const c: Call = {
      id,
      req,
      policy,
      path: req.path ?? enginePath(operation!),
      ...(operation ? { operation } : {}),
      stream: req.stream && (!operation || streams(operation)),
    };
    const { book, log } = this.deps;
    const started = monoMs();
    if (policy.booked) book.begin(id, policy.source, req.model, c.stream, req.purpose);
    const done = (r: Partial_): InferenceResult => {
      const result: InferenceResult = { ...r, latencyMs: elapsedMs(started), streamed: c.stream, ...(operation ? { operation } : {}) };
      if (policy.booked) {
        book.finish(id, {
          status: r.status,
          tokensIn: r.tokensIn,
          tokensOut: r.tokensOut,
          estimated: r.estimated,
          statusCode: r.statusCode,
          ...(r.error ? { error: r.error } : {}),
        });
      }
      return result;
    };
    let lease: Lease | undefined;
    try {
      lease = await this.admit(c, sink);
    } catch (e) {
      const r = e instanceof SchedulerRejection ? e : new SchedulerRejection('rejected', (e as Error).message, 500);
      if (policy.booked) log.info(`request ${id} for ${req.model} not admitted: ${r.message}`, { requestId: id });
      return done({
        status: r.kind === 'cancelled' ? 'cancelled' : 'rejected',
        statusCode: r.statusCode,
        error: r.message,
        kind: r.kind === 'cancelled' ? 'cancelled' : r.kind,
        ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
        tokensIn: 0,
        tokensOut: 0,
        estimated: false,
      });
    }
    const sent = { any: false };
    let url = this.urlOf(c, lease);
    try {
      let result: Partial_;
      try {
        result = await this.call(c, url, sink, sent);
      } catch (e) {
        // Nothing reached the client: another endpoint when this one's engine is gone, else one retry of a
        // transient failure. Never after a byte was sent.
        const next = await this.afterFailure(c, url, e, sent.any);
        if (!next) throw e;
        if (next.lease && next.lease !== lease) {
          lease?.release();
          lease = next.lease;
          url = this.urlOf(c, lease);
        }
        result = await this.call(c, url, sink, sent);
      }
      return done(result);
    } catch (e) {
      if (e instanceof Cancelled) return done(e.partial);
      const aborted = req.signal.aborted;
      const err = e instanceof EngineHttpError ? e : undefined;
      // The engine refusing the provider's own key is the provider's problem, never the client's auth error.
      const keyRefused = !aborted && (err?.statusCode === 401 || err?.statusCode === 403);
      const statusCode = aborted ? 499 : keyRefused ? 502 : (err?.statusCode ?? 502);
      const message = aborted ? 'cancelled' : keyRefused ? ENGINE_KEY_REJECTED : (err?.message ?? `engine request failed: ${(e as Error).message}`);
      if (!aborted && policy.booked) log.warn(`request ${id} (${req.model}) failed: ${message}${keyRefused ? ` (${err?.message})` : ''}`, { requestId: id });
      const noAnswer = err?.unreachable ?? (err?.statusCode === 504 && err.body === undefined ? 'timeout' : undefined);
      return done({
        status: aborted ? 'cancelled' : 'error',
        statusCode,
        error: message,
        kind: aborted ? 'cancelled' : 'internal',
        ...(err?.body !== undefined && !keyRefused ? { response: err.body } : {}),
        ...(aborted || !err ? {} : noAnswer ? { noAnswer } : { engineStatus: err.answered ?? err.statusCode }),
        tokensIn: 0,
        tokensOut: 0,
        estimated: false,
      });
    } finally {
      lease?.release();
    }
  }

  private admit(c: Call, sink: InferenceSink): Promise<Lease | undefined> {
    const { req, policy } = c;
    if (policy.admission === 'none') return Promise.resolve(undefined);
    if (policy.admission === 'endpoint') {
      if (!req.target) return Promise.reject(new SchedulerRejection('rejected', `a ${req.purpose} call names no endpoint`, 500));
      if (!this.deps.admitOn) return Promise.resolve(undefined);
      const lease = this.deps.admitOn(req.target.url);
      if (!lease && req.overCap) return Promise.resolve(undefined);
      return lease
        ? Promise.resolve(lease)
        : Promise.reject(new SchedulerRejection('rejected', `every slot of ${req.target.url} is taken`, 429, undefined, 'queue_full'));
    }
    const lane = policy.lane === 'caller' ? (req.lane ?? 'local') : policy.lane;
    return this.deps.admit(req.model, { requestId: c.id, source: lane, signal: req.signal, onAccepted: (p) => sink.accepted?.(p) });
  }

  private urlOf(c: Call, lease: Lease | undefined): string {
    return lease?.endpointUrl ?? c.req.target?.url ?? '';
  }

  /** One engine call on the leased (or named) endpoint. */
  private call(c: Call, url: string, sink: InferenceSink, sent: { any: boolean }): Promise<Partial_> {
    const { req } = c;
    const endpoint = req.target ?? this.deps.registry.endpoint(req.model, url) ?? { url };
    if (c.policy.booked) this.deps.book.running(c.id, url);
    const opts = {
      endpoint,
      path: c.path,
      // What runs is the model the owner enabled (local_model ?? model id), never what the body names.
      body: req.target || endpoint.localModel || req.body.model === req.model ? req.body : { ...req.body, model: req.model },
      signal: req.signal,
      headersTimeoutMs: this.deps.headersTimeoutMs ?? ENGINE_TIMEOUTS.headersMs,
      idleTimeoutMs: this.deps.idleTimeoutMs ?? ENGINE_TIMEOUTS.idleMs,
      totalTimeoutMs: req.timeoutMs ?? this.deps.totalTimeoutMs ?? ENGINE_TIMEOUTS.totalMs,
      // No headers by the deadline: the endpoint is suspect at once, whatever the call (a frozen engine). Not
      // Ollama's load call: loading a large model before its answer is what that call is for.
      ...(c.policy.reportsTrouble && req.purpose !== 'ollama-load'
        ? {
            onHeadersOverdue: (afterMs: number) =>
              this.deps.onEngineTrouble?.(url, 'unresponsive', `the engine at ${url} sent no answer headers within ${Math.round(afterMs / 100) / 10} s`),
          }
        : {}),
    };
    return c.stream ? this.stream(c, opts, sink, sent) : this.once(c, opts);
  }

  /**
   * After a failed call: report an engine that is gone (refused/reset) or refuses our key, so the endpoint
   * is taken out at once; then, when nothing reached the client, a lease on another endpoint, or the one
   * retry of a transient failure ({lease} to go on with, undefined to give up).
   */
  private async afterFailure(c: Call, url: string, e: unknown, delivered: boolean): Promise<{ lease?: Lease } | undefined> {
    const { req, policy } = c;
    if (req.signal.aborted || !(e instanceof EngineHttpError)) return undefined;
    const keyRefused = e.statusCode === 401 || e.statusCode === 403;
    const gone = e.unreachable !== undefined;
    if (policy.reportsTrouble) {
      if (gone) this.deps.onEngineTrouble?.(url, e.unreachable === 'ECONNREFUSED' ? 'down' : 'suspect', e.message);
      else if (keyRefused) this.deps.onEngineTrouble?.(url, 'key_rejected', `engine refuses our key: it answered ${e.statusCode} to a request`);
    }
    if (delivered) return undefined;
    if (policy.failover && (gone || keyRefused) && (this.deps.registry.get(req.model)?.endpoints.length ?? 0) >= 2) {
      try {
        const lease = await this.deps.admit(req.model, {
          requestId: c.id,
          source: policy.lane === 'caller' ? (req.lane ?? 'local') : policy.lane,
          signal: req.signal,
        });
        if (lease.endpointUrl !== url) {
          this.deps.log.info(`request ${c.id} (${req.model}): ${e.message}; trying ${lease.endpointUrl}`, { requestId: c.id });
          return { lease };
        }
        lease.release();
      } catch {
        // no other endpoint can take it: the retry below, or the first failure is reported
      }
    }
    if (!policy.retry || !transient(e)) return undefined;
    this.deps.log.info(`request ${c.id} (${req.model}): ${e.message}; trying once more`, { requestId: c.id });
    await abortableDelay(this.deps.retryDelayMs ?? 100, req.signal);
    return req.signal.aborted ? undefined : {};
  }

  private async stream(c: Call, opts: Parameters<typeof streamRequest>[0], sink: InferenceSink, sent: { any: boolean }): Promise<Partial_> {
    const { req, policy } = c;
    const book = this.deps.book;
    let usage: TokenUsage | undefined;
    let error: string | undefined;
    let errorStatus: number | undefined;
    let finishReason: string | undefined;
    let truncated = false;
    let lost = false;
    /**
     * Tokens relayed to the caller, counted by chunk (token ids when the engine sends them): the estimate
     * when usage is missing (no text of the stream is kept for it: every chunk carrying text counts at least one).
     */
    let delivered = 0;
    const events = await streamRequest(opts);
    // Pushed from the engine response's own 'data' callback: no promise per chunk on the relay's path.
    await events.consume((ev) => {
      if (ev.type === 'chunk') {
        const carries = ev.text !== '' || ev.reasoning !== '';
        if (carries && policy.booked) book.appendText(c.id, ev.text || ev.reasoning);
        if (ev.finishReason) finishReason = ev.finishReason;
        if (ev.usage) usage = ev.usage;
        // Clients get the model id they asked for, never the engine's own name (a file path, an alias).
        if (typeof ev.data.model === 'string' && ev.data.model !== req.model) ev.data.model = req.model;
        sent.any = true;
        if (carries) delivered += ev.tokenIds?.length || 1;
        // A sink that is backed up returns a promise: reading the engine waits for it.
        return sink.chunk?.(ev);
      }
      if (ev.type === 'error') {
        error = ev.message;
        errorStatus = ev.statusCode;
        if (ev.connectionLost) lost = true;
      } else {
        usage = ev.usage ?? usage;
        truncated = ev.truncated;
      }
      return undefined;
    });
    const estimated = !usage && policy.estimates;
    const tokensIn = usage?.promptTokens ?? (estimated ? estimateTokens(promptText(req.body)) : 0);
    const tokensOut = usage?.completionTokens ?? (estimated ? delivered : 0);
    if (req.signal.aborted)
      throw new Cancelled({ status: 'cancelled', statusCode: 499, error: 'cancelled', kind: 'cancelled', tokensIn, tokensOut, estimated });
    if (lost && error && policy.reportsTrouble) this.deps.onEngineTrouble?.(opts.endpoint.url, 'suspect', error);
    if (!error && truncated) error = 'the engine ended the stream before finishing the answer (no [DONE] and no finish_reason)';
    if (error) {
      if (policy.booked) this.deps.log.warn(`request ${c.id} (${req.model}) failed mid-stream: ${error}`, { requestId: c.id });
      return { status: 'error', statusCode: errorStatus ?? 502, error, kind: 'internal', tokensIn, tokensOut, estimated };
    }
    return { status: 'ok', statusCode: 200, tokensIn, tokensOut, estimated, ...(finishReason ? { finishReason } : {}) };
  }

  private async once(c: Call, opts: Parameters<typeof requestJson>[0]): Promise<Partial_> {
    const { req, policy } = c;
    // A non-stream answer arrives whole, after the generation: the total bound ends it; missing headers at the
    // headers deadline only make the endpoint suspect (opts.onHeadersOverdue).
    const r = await requestJson(opts);
    const json = r.json as { model?: unknown; choices?: Array<{ message?: { content?: string }; text?: string; finish_reason?: string }> };
    if (json && typeof json === 'object' && typeof json.model === 'string' && !req.target) json.model = req.model;
    const text = json?.choices?.[0]?.message?.content ?? json?.choices?.[0]?.text ?? '';
    if (text && policy.booked) this.deps.book.appendText(c.id, text);
    const estimated = !r.usage && policy.estimates;
    return {
      status: 'ok',
      statusCode: r.statusCode,
      response: r.json,
      tokensIn: r.usage?.promptTokens ?? (estimated ? estimateTokens(promptText(req.body)) : 0),
      tokensOut: r.usage?.completionTokens ?? (estimated ? estimateTokens(text) : 0),
      estimated,
      ...(json?.choices?.[0]?.finish_reason ? { finishReason: json.choices[0].finish_reason } : {}),
    };
  }
}
