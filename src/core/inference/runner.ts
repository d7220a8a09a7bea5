// InferenceRunner: one request from admission to the ledger, for hub and local traffic alike.
// Admission (scheduler) -> engine call (stream or not) -> chunks to the caller's sink -> usage
// (engine-reported, or estimated and marked so) -> RequestBook (console) -> ledger (via the book).
import { EngineHttpError, type EngineStreamEvent, type TokenUsage } from '../engine/types';
import { estimateTokens, requestJson, streamRequest } from '../engine/client';
import { SchedulerRejection, type AdmitOptions, type Lease } from '../scheduler/types';
import type { RequestSource } from '../../shared/types';
import type { Logger } from '../log';
import type { RequestBook } from '../requests';
import type { ModelRegistry } from '../agent/models';
import { generateInternal, type InternalGeneration } from './internal';

export type ChunkEvent = Extract<EngineStreamEvent, { type: 'chunk' }>;

export interface InferenceRequest {
  id: string;
  source: RequestSource;
  model: string;
  body: Record<string, unknown>;
  stream: boolean;
  signal: AbortSignal;
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
}

export interface RunnerDeps {
  registry: ModelRegistry;
  admit(model: string, opts: AdmitOptions): Promise<Lease>;
  book: RequestBook;
  log: Logger;
  /** Longest wait for an engine's response headers (default 60 s) and between stream bytes (default 120 s). */
  headersTimeoutMs?: number;
  idleTimeoutMs?: number;
  /**
   * A real request found the engine gone ('down': connection refused), refusing our key, or lost its
   * connection ('suspect': probe it now, it is down if the probe is refused too).
   */
  onEngineTrouble?(url: string, condition: 'down' | 'key_rejected' | 'suspect', error: string): void;
}

/** What hub and gateway clients are told when the engine refuses the provider's own engine key. */
export const ENGINE_KEY_REJECTED = "engine rejected the provider's key";

/** Thrown out of stream() when the request was cancelled after data flowed: carries what was delivered. */
class Cancelled extends Error {
  constructor(readonly partial: Omit<InferenceResult, 'latencyMs'>) {
    super('cancelled');
  }
}

function promptText(body: Record<string, unknown>): string {
  if (typeof body.prompt === 'string') return body.prompt;
  return JSON.stringify(body.messages ?? body.prompt ?? '');
}

export class InferenceRunner {
  constructor(private readonly deps: RunnerDeps) {}

  /** The agent's own engine calls (warmup, verify, benchmark): admitted, on the lease's endpoint, booked. See internal.ts. */
  generate<T>(g: InternalGeneration<T>): Promise<T> {
    return generateInternal(this.deps, g);
  }

  async run(req: InferenceRequest, sink: InferenceSink = {}): Promise<InferenceResult> {
    const { book, log } = this.deps;
    const started = Date.now();
    book.begin(req.id, req.source, req.model, req.stream);
    const done = (r: Omit<InferenceResult, 'latencyMs'>): InferenceResult => {
      const result = { ...r, latencyMs: Date.now() - started };
      book.finish(req.id, {
        status: r.status,
        tokensIn: r.tokensIn,
        tokensOut: r.tokensOut,
        estimated: r.estimated,
        statusCode: r.statusCode,
        ...(r.error ? { error: r.error } : {}),
      });
      return result;
    };
    let lease: Lease;
    try {
      lease = await this.deps.admit(req.model, { requestId: req.id, source: req.source, signal: req.signal, onAccepted: (p) => sink.accepted?.(p) });
    } catch (e) {
      const r = e instanceof SchedulerRejection ? e : new SchedulerRejection('rejected', (e as Error).message, 500);
      log.info(`request ${req.id} for ${req.model} not admitted: ${r.message}`, { requestId: req.id });
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
    try {
      let result: Omit<InferenceResult, 'latencyMs'>;
      try {
        result = await this.call(req, lease.endpointUrl, sink, sent);
      } catch (e) {
        // The engine is gone or refuses our key and nothing reached the client: another endpoint, once.
        const next = await this.failover(req, lease.endpointUrl, e, sent.any);
        if (!next) throw e;
        lease.release();
        lease = next;
        result = await this.call(req, lease.endpointUrl, sink, sent);
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
      if (!aborted) log.warn(`request ${req.id} (${req.model}) failed: ${message}${keyRefused ? ` (${err?.message})` : ''}`, { requestId: req.id });
      return done({
        status: aborted ? 'cancelled' : 'error',
        statusCode,
        error: message,
        kind: aborted ? 'cancelled' : 'internal',
        ...(err?.body !== undefined && !keyRefused ? { response: err.body } : {}),
        tokensIn: 0,
        tokensOut: 0,
        estimated: false,
      });
    } finally {
      lease.release();
    }
  }

  /** One engine call on the leased endpoint. */
  private call(req: InferenceRequest, url: string, sink: InferenceSink, sent: { any: boolean }): Promise<Omit<InferenceResult, 'latencyMs'>> {
    const endpoint = this.deps.registry.endpoint(req.model, url) ?? { url };
    this.deps.book.running(req.id, url);
    const path = req.body.messages === undefined && req.body.prompt !== undefined ? '/v1/completions' : '/v1/chat/completions';
    const opts = {
      endpoint,
      path,
      // What runs is the model the owner enabled (local_model ?? model id), never what the body names.
      body: endpoint.localModel || req.body.model === req.model ? req.body : { ...req.body, model: req.model },
      signal: req.signal,
      headersTimeoutMs: this.deps.headersTimeoutMs ?? 60_000,
      idleTimeoutMs: this.deps.idleTimeoutMs ?? 120_000,
    } as const;
    return req.stream ? this.stream(req, opts, sink, sent) : this.once(req, opts);
  }

  /**
   * After a failed call: report an engine that is gone (refused/reset) or refuses our key, so the
   * endpoint is taken out at once; then, when nothing reached the client, a lease on another endpoint.
   */
  private async failover(req: InferenceRequest, url: string, e: unknown, delivered: boolean): Promise<Lease | undefined> {
    if (req.signal.aborted || !(e instanceof EngineHttpError)) return undefined;
    const keyRefused = e.statusCode === 401 || e.statusCode === 403;
    if (e.unreachable) this.deps.onEngineTrouble?.(url, e.unreachable === 'ECONNREFUSED' ? 'down' : 'suspect', e.message);
    else if (keyRefused) this.deps.onEngineTrouble?.(url, 'key_rejected', `engine refuses our key: it answered ${e.statusCode} to a request`);
    else return undefined;
    if (delivered || (this.deps.registry.get(req.model)?.endpoints.length ?? 0) < 2) return undefined;
    try {
      const lease = await this.deps.admit(req.model, { requestId: req.id, source: req.source, signal: req.signal });
      if (lease.endpointUrl !== url) {
        this.deps.log.info(`request ${req.id} (${req.model}): ${e.message}; trying ${lease.endpointUrl}`, { requestId: req.id });
        return lease;
      }
      lease.release();
    } catch {
      // no other endpoint can take it: the first failure is reported
    }
    return undefined;
  }

  private async stream(
    req: InferenceRequest,
    opts: Parameters<typeof streamRequest>[0],
    sink: InferenceSink,
    sent: { any: boolean } = { any: false },
  ): Promise<Omit<InferenceResult, 'latencyMs'>> {
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
        if (carries) this.deps.book.appendText(req.id, ev.text || ev.reasoning);
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
    const estimated = !usage;
    const tokensIn = usage?.promptTokens ?? estimateTokens(promptText(req.body));
    const tokensOut = usage?.completionTokens ?? delivered;
    if (req.signal.aborted) throw new Cancelled({ status: 'cancelled', statusCode: 499, error: 'cancelled', kind: 'cancelled', tokensIn, tokensOut, estimated });
    if (lost && error) this.deps.onEngineTrouble?.(opts.endpoint.url, 'suspect', error);
    if (!error && truncated) error = 'the engine ended the stream before finishing the answer (no [DONE] and no finish_reason)';
    if (error) {
      this.deps.log.warn(`request ${req.id} (${req.model}) failed mid-stream: ${error}`, { requestId: req.id });
      return { status: 'error', statusCode: errorStatus ?? 502, error, kind: 'internal', tokensIn, tokensOut, estimated };
    }
    return { status: 'ok', statusCode: 200, tokensIn, tokensOut, estimated, ...(finishReason ? { finishReason } : {}) };
  }

  private async once(req: InferenceRequest, opts: Parameters<typeof requestJson>[0]): Promise<Omit<InferenceResult, 'latencyMs'>> {
    // A non-stream answer arrives whole, after the generation: the engine client's long JSON timeout applies.
    const r = await requestJson({ ...opts, headersTimeoutMs: undefined });
    const json = r.json as { model?: unknown; choices?: Array<{ message?: { content?: string }; text?: string; finish_reason?: string }> };
    if (json && typeof json === 'object' && typeof json.model === 'string') json.model = req.model;
    const text = json?.choices?.[0]?.message?.content ?? json?.choices?.[0]?.text ?? '';
    if (text) this.deps.book.appendText(req.id, text);
    const estimated = !r.usage;
    return {
      status: 'ok',
      statusCode: r.statusCode,
      response: r.json,
      tokensIn: r.usage?.promptTokens ?? estimateTokens(promptText(req.body)),
      tokensOut: r.usage?.completionTokens ?? estimateTokens(text),
      estimated,
      ...(json?.choices?.[0]?.finish_reason ? { finishReason: json.choices[0].finish_reason } : {}),
    };
  }
}
