// Admission control shared by hub and local traffic: per-endpoint and per-model concurrency,
// a bounded fair queue with positions, least-outstanding endpoint choice, pause and drain.
import { EventEmitter } from 'node:events';
import { z } from 'zod';
import type { ModelHealth, RequestSource } from '../../shared/types';
import type { Logger } from '../base/log';
import { elapsedMs, monoMs } from '../base/clock';
import { FairQueue } from './fair-queue';
import {
  SchedulerConfigError,
  SchedulerRejection,
  type AdmitOptions,
  type Lease,
  type ModelLimits,
  type SchedulerEndpoint,
  type SchedulerLimits,
  type SchedulerModelStats,
} from './types';
import { formatIssues, issueField } from '../../shared/zod-issues';
import { TurnPacer } from './turn-pacer';

export const DEFAULT_LIMITS: SchedulerLimits = { maxConcurrentPerEndpoint: 4, maxQueuePerModel: 32, queueTimeoutMs: 30_000 };

export const PAUSED_MESSAGE = 'The owner has paused serving; try again later';
/** Suggested wait given to clients while paused. */
const PAUSE_RETRY_MS = 30_000;
/** Assumed request duration until one has been measured, for retry estimates. */
const DEFAULT_SERVICE_MS = 2_000;

const limitsSchema = z
  .object({
    maxConcurrentPerEndpoint: z.number().int().min(1),
    maxQueuePerModel: z.number().int().min(0),
    queueTimeoutMs: z.number().int().min(1),
  })
  .partial();

const modelLimitsSchema = z.object({ maxConcurrent: z.number().int().min(1).optional(), maxQueue: z.number().int().min(0).optional() });

const endpointSchema = z.object({
  url: z.string().min(1),
  health: z.enum(['healthy', 'degraded', 'unhealthy']),
  modelHealth: z.enum(['healthy', 'degraded', 'unhealthy']).optional(),
  maxConcurrent: z.number().int().min(1).optional(),
});

interface EndpointEntry {
  url: string;
  health: ModelHealth;
  inFlight: number;
  /** Sequence number of the last request sent here: ties go to the least recently used endpoint. */
  lastUsed: number;
}

interface Waiter {
  requestId: string;
  source: RequestSource;
  enqueuedAt: number;
  resolve: (lease: Lease) => void;
  reject: (err: SchedulerRejection) => void;
  /** Stops the queue timer and the abort listener. */
  dispose: () => void;
}

interface ModelEntry {
  model: string;
  urls: string[];
  /** Per-URL overrides from this model's endpoint list. */
  caps: Map<string, number>;
  /** This model's own health per URL, where it is worse than the engine's there. */
  own: Map<string, ModelHealth>;
  maxConcurrent?: number;
  maxQueue: number;
  inFlight: number;
  queue: FairQueue<Waiter>;
  /** Moving average of how long a lease is held, for retry-after estimates. */
  avgServiceMs: number;
}

const HEALTH_RANK: Record<ModelHealth, number> = { healthy: 0, degraded: 1, unhealthy: 2 };

export class Scheduler extends EventEmitter {
  private readonly limits: SchedulerLimits;
  private readonly models = new Map<string, ModelEntry>();
  private readonly endpoints = new Map<string, EndpointEntry>();
  private paused = false;
  /** The guard rails' share of each endpoint's limit (1: all of it; 0.5 while a GPU is over its ceiling). */
  private throttle = 1;
  private pauseMessage = PAUSED_MESSAGE;
  /** Models held while a GPU they run on is paused (gpu-pauses.ts): model → the client-facing reason. */
  private held = new Map<string, string>();
  private closed = false;
  private seq = 0;
  private totalInFlightCount = 0;
  private drainWaiters: Array<() => void> = [];
  private changeQueued = false;
  /**
   * Admissions go one per event-loop turn: a burst read in one tick (the hub's 64 requests in one TCP
   * segment: `ws` emits every message of a read in the same tick) would otherwise start every engine call
   * before the loop reads any engine response, so running streams' chunks would wait behind all the starts.
   * The first admission of a turn goes at once; a cancel read in the same tick reaches the ones behind it
   * before their engine call is made.
   */
  private readonly pacer?: TurnPacer;

  constructor(
    limits: Partial<SchedulerLimits> = {},
    private readonly log?: Logger,
    /** pace: admissions one per event-loop turn (default; off only where a test looks at the queue alone). */
    opts: { pace?: boolean } = {},
  ) {
    super();
    if (opts.pace ?? true) this.pacer = new TurnPacer();
    const parsed = limitsSchema.safeParse(limits);
    if (!parsed.success) throw new SchedulerConfigError('invalid_limits', `Invalid scheduler limits: ${formatIssues(parsed.error)}`, issueField(parsed.error));
    this.limits = { ...DEFAULT_LIMITS, ...stripUndefined(parsed.data) };
  }

  /** Adds or replaces a model's endpoints and limits. Running and queued requests are kept. */
  setModel(model: string, endpoints: SchedulerEndpoint[], limits: ModelLimits = {}): void {
    const eps = z.array(endpointSchema).safeParse(endpoints);
    if (!eps.success)
      throw new SchedulerConfigError('invalid_endpoints', `Invalid endpoints for model "${model}": ${formatIssues(eps.error)}`, issueField(eps.error));
    const lim = modelLimitsSchema.safeParse(limits);
    if (!lim.success)
      throw new SchedulerConfigError('invalid_limits', `Invalid limits for model "${model}": ${formatIssues(lim.error)}`, issueField(lim.error));

    let entry = this.models.get(model);
    if (!entry) {
      entry = { model, urls: [], caps: new Map(), own: new Map(), maxQueue: 0, inFlight: 0, queue: new FairQueue(), avgServiceMs: DEFAULT_SERVICE_MS };
      this.models.set(model, entry);
    }
    const previousUrls = entry.urls;
    entry.urls = [...new Set(eps.data.map((e) => e.url))];
    entry.caps = new Map(eps.data.flatMap((e) => (e.maxConcurrent ? [[e.url, e.maxConcurrent] as const] : [])));
    entry.own = new Map(eps.data.flatMap((e) => (e.modelHealth && e.modelHealth !== 'healthy' ? [[e.url, e.modelHealth] as const] : [])));
    entry.maxConcurrent = lim.data.maxConcurrent;
    entry.maxQueue = lim.data.maxQueue ?? this.limits.maxQueuePerModel;
    for (const e of eps.data) {
      const ep = this.endpoints.get(e.url);
      if (ep) ep.health = e.health;
      else this.endpoints.set(e.url, { url: e.url, health: e.health, inFlight: 0, lastUsed: 0 });
    }
    for (const url of previousUrls) this.forgetIfUnused(url);
    if (!this.hasUsableEndpoint(entry)) this.rejectQueue(entry, () => unavailable(model));
    this.pump();
    this.changed();
  }

  /** Withdraws a model: its queued requests are refused, running ones finish. */
  removeModel(model: string): void {
    const entry = this.models.get(model);
    if (!entry) return;
    this.models.delete(model);
    this.rejectQueue(
      entry,
      // 503, not 404: a model that goes away while requests wait is an outage, and a client (the openai SDK) reads
      // 404 as "no such model" (NotFoundError) and does not try again.
      () =>
        new SchedulerRejection(
          'rejected',
          `Model "${model}" was withdrawn while the request waited (disabled or its engine went away). Try again shortly, or pick another model.`,
          503,
          PAUSE_RETRY_MS,
          'withdrawn',
        ),
    );
    for (const url of entry.urls) this.forgetIfUnused(url);
    this.pump();
    this.changed();
  }

  /** Health of one engine URL, for every model it serves. Unhealthy endpoints get no new requests. */
  setEndpointHealth(url: string, health: ModelHealth): void {
    const ep = this.endpoints.get(url);
    if (!ep || ep.health === health) return;
    ep.health = health;
    this.log?.info(`Endpoint ${url} is now ${health}`);
    if (health === 'unhealthy') {
      for (const m of this.models.values()) {
        if (m.urls.includes(url) && !this.hasUsableEndpoint(m)) this.rejectQueue(m, () => unavailable(m.model));
      }
    }
    this.pump();
    this.changed();
  }

  /**
   * Waits for a slot for one request of `model`. Resolves with a lease on the chosen endpoint;
   * rejects with a SchedulerRejection (404 not served/unavailable, 429 paused/full/timeout, 499 cancelled).
   */
  admit(model: string, opts: AdmitOptions): Promise<Lease> {
    const turn = this.closed ? undefined : this.pacer?.take();
    if (!turn) return this.admitNow(model, opts);
    return turn.then((go) => (go ? this.admitNow(model, opts) : Promise.reject(shuttingDown())));
  }

  /**
   * A slot on one endpoint, now or not at all: for a call that must reach that endpoint whatever its health
   * or a pause (the deep health probe finds out whether the engine serves). It counts against the
   * endpoint's limit, so a probe never exceeds what the engine runs at once; undefined when every slot is
   * taken. An endpoint no enabled model uses has nothing to share: the lease holds nothing.
   */
  admitOn(url: string): Lease | undefined {
    if (this.closed) return undefined;
    const ep = this.endpoints.get(url);
    if (!ep) return { endpointUrl: url, release: () => undefined };
    if (ep.inFlight >= this.endpointCap(url)) return undefined;
    ep.inFlight++;
    let released = false;
    this.changed();
    return {
      endpointUrl: url,
      release: () => {
        if (released) return;
        released = true;
        ep.inFlight--;
        this.forgetIfUnused(url);
        this.pump();
        this.changed();
      },
    };
  }

  private admitNow(model: string, opts: AdmitOptions): Promise<Lease> {
    return new Promise<Lease>((resolve, reject) => {
      const refuse = (err: SchedulerRejection): void => {
        this.log?.debug(`Refused ${opts.requestId} for ${model}: ${err.message}`, { requestId: opts.requestId, kind: err.kind, reason: err.reason });
        reject(err);
      };
      if (this.closed)
        return refuse(new SchedulerRejection('rejected', 'The provider is shutting down; try again later.', 503, PAUSE_RETRY_MS, 'shutting_down'));
      if (opts.signal?.aborted) return refuse(cancelled());
      const entry = this.models.get(model);
      if (!entry) {
        return refuse(
          new SchedulerRejection(
            'model_not_loaded',
            `Model "${model}" is not served here. List the available models with GET /v1/models and pick one of them.`,
            404,
            undefined,
            'unknown_model',
          ),
        );
      }
      if (this.paused) return refuse(new SchedulerRejection('rejected', this.pauseMessage, 429, PAUSE_RETRY_MS, 'paused'));
      const heldFor = this.held.get(model);
      if (heldFor !== undefined) return refuse(new SchedulerRejection('rejected', heldFor, 429, PAUSE_RETRY_MS, 'paused'));
      if (!this.hasUsableEndpoint(entry)) return refuse(unavailable(model));

      if (entry.queue.size === 0) {
        const ep = this.runnableEndpoint(entry);
        if (ep) {
          const lease = this.grant(entry, ep);
          notifyAccepted(opts, 0, this.log);
          return resolve(lease);
        }
      }
      if (entry.queue.size >= entry.maxQueue) {
        const retry = this.retryEstimate(entry);
        return refuse(
          new SchedulerRejection(
            'rejected',
            `Model "${model}" is at capacity (${entry.inFlight} running, ${entry.queue.size} waiting); retry in about ${Math.ceil(retry / 1000)} s.`,
            429,
            retry,
            'queue_full',
          ),
        );
      }
      this.enqueue(entry, opts, resolve, refuse);
    });
  }

  /** Stop admitting: new and queued requests get 429 with `message`; running ones finish. */
  pause(message: string = PAUSED_MESSAGE): void {
    this.pauseMessage = message;
    if (this.paused) return;
    this.paused = true;
    this.log?.info('Serving paused: new requests are refused, running ones finish');
    for (const m of this.models.values()) this.rejectQueue(m, () => new SchedulerRejection('rejected', this.pauseMessage, 429, PAUSE_RETRY_MS, 'paused'));
    this.changed();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.log?.info('Serving resumed');
    this.pump();
    this.changed();
  }

  /**
   * Holds these models (model → the client-facing reason) and releases every other: a held model's new and
   * queued requests get 429 'paused' while the rest serve; running ones finish.
   */
  setHeld(held: ReadonlyMap<string, string>): void {
    const before = this.held;
    this.held = new Map(held);
    let moved = before.size !== this.held.size;
    for (const [model, reason] of this.held) {
      if (before.get(model) !== reason) moved = true;
      const entry = this.models.get(model);
      if (entry && !before.has(model)) this.rejectQueue(entry, () => new SchedulerRejection('rejected', reason, 429, PAUSE_RETRY_MS, 'paused'));
    }
    if (!moved) return;
    this.pump();
    this.changed();
  }

  /** Serves `share` of each endpoint's limit (at least one request): the guard rails' first step. */
  setThrottle(share: number): void {
    const next = Math.min(1, Math.max(0, share));
    if (next === this.throttle) return;
    this.throttle = next;
    this.log?.info(next < 1 ? `Fewer requests at once: ${Math.round(next * 100)} % of each engine's limit` : "Each engine's full limit again");
    this.pump();
    this.changed();
  }

  isPaused(): boolean {
    return this.paused;
  }

  /** Requests running now, over all models. */
  inFlight(): number {
    return this.totalInFlightCount;
  }

  /** Resolves when no request is running (at once if none is). */
  drained(): Promise<void> {
    if (this.totalInFlightCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  stats(): SchedulerModelStats[] {
    return [...this.models.values()].map((m) => ({
      model: m.model,
      inFlight: m.inFlight,
      queued: m.queue.size,
      maxConcurrent: this.modelCap(m),
      maxQueue: m.maxQueue,
      endpoints: m.urls.map((url) => {
        const ep = this.endpoints.get(url);
        return { url, inFlight: ep?.inFlight ?? 0, maxConcurrent: this.endpointCap(url), health: this.healthFor(m, url) };
      }),
    }));
  }

  /** Refuses everything queued and every later admit; running leases may still be released. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pacer?.close();
    for (const m of this.models.values())
      this.rejectQueue(m, () => new SchedulerRejection('cancelled', 'The provider is shutting down.', 499, undefined, 'shutting_down'));
  }

  // ---- internals ----

  private enqueue(entry: ModelEntry, opts: AdmitOptions, resolve: (l: Lease) => void, reject: (e: SchedulerRejection) => void): void {
    const signal = opts.signal;
    const onAbort = (): void => {
      if (entry.queue.remove(waiter)) {
        waiter.dispose();
        reject(cancelled());
        this.changed();
      }
    };
    const timer = setTimeout(() => {
      if (!entry.queue.remove(waiter)) return;
      waiter.dispose();
      const retry = this.retryEstimate(entry);
      reject(
        new SchedulerRejection(
          'rejected',
          `Waited ${Math.round(this.limits.queueTimeoutMs / 1000)} s for a free slot on model "${entry.model}" without getting one; retry in about ${Math.ceil(retry / 1000)} s.`,
          429,
          retry,
          'queue_timeout',
        ),
      );
      this.changed();
    }, this.limits.queueTimeoutMs);
    const waiter: Waiter = {
      requestId: opts.requestId,
      source: opts.source,
      enqueuedAt: ++this.seq,
      resolve,
      reject,
      dispose: () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      },
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const position = entry.queue.push(waiter);
    notifyAccepted(opts, position, this.log);
    this.changed();
  }

  /** Hands free slots to waiting requests, the longest-waiting model first, until none can run. */
  private pump(): void {
    if (this.paused || this.closed) return;
    for (;;) {
      const waiting = [...this.models.values()].filter((m) => m.queue.size > 0).sort((a, b) => a.queue.oldest() - b.queue.oldest());
      let progressed = false;
      for (const m of waiting) {
        if (this.held.has(m.model)) continue;
        const ep = this.runnableEndpoint(m);
        if (!ep) continue;
        const waiter = m.queue.shift();
        if (!waiter) continue;
        waiter.dispose();
        waiter.resolve(this.grant(m, ep));
        progressed = true;
        break;
      }
      if (!progressed) return;
    }
  }

  private grant(entry: ModelEntry, ep: EndpointEntry): Lease {
    ep.inFlight++;
    ep.lastUsed = ++this.seq;
    entry.inFlight++;
    this.totalInFlightCount++;
    const startedAt = monoMs();
    let released = false;
    this.changed();
    return {
      endpointUrl: ep.url,
      release: () => {
        if (released) return;
        released = true;
        ep.inFlight--;
        entry.inFlight--;
        this.totalInFlightCount--;
        entry.avgServiceMs = entry.avgServiceMs * 0.8 + elapsedMs(startedAt) * 0.2;
        this.forgetIfUnused(ep.url);
        this.pump();
        if (this.totalInFlightCount === 0) {
          const waiters = this.drainWaiters;
          this.drainWaiters = [];
          for (const w of waiters) w();
        }
        this.changed();
      },
    };
  }

  /** The endpoint a new request of this model would run on now, or undefined when it must wait. */
  private runnableEndpoint(entry: ModelEntry): EndpointEntry | undefined {
    if (entry.inFlight >= this.modelCap(entry)) return undefined;
    let best: EndpointEntry | undefined;
    let bestHealth: ModelHealth = 'unhealthy';
    for (const url of entry.urls) {
      const ep = this.endpoints.get(url);
      const health = this.healthFor(entry, url);
      if (!ep || health === 'unhealthy' || ep.inFlight >= this.endpointCap(url)) continue;
      if (
        !best ||
        HEALTH_RANK[health] < HEALTH_RANK[bestHealth] ||
        (health === bestHealth && (ep.inFlight < best.inFlight || (ep.inFlight === best.inFlight && ep.lastUsed < best.lastUsed)))
      ) {
        best = ep;
        bestHealth = health;
      }
    }
    return best;
  }

  /** An endpoint's limit: the lowest override any model gives it, else the default. */
  private endpointCap(url: string): number {
    let cap = Infinity;
    for (const m of this.models.values()) {
      const c = m.caps.get(url);
      if (c !== undefined) cap = Math.min(cap, c);
    }
    const full = cap === Infinity ? this.limits.maxConcurrentPerEndpoint : cap;
    return this.throttle < 1 ? Math.max(1, Math.floor(full * this.throttle)) : full;
  }

  private modelCap(entry: ModelEntry): number {
    if (entry.maxConcurrent !== undefined) return entry.maxConcurrent;
    let sum = 0;
    for (const url of entry.urls) if (this.healthFor(entry, url) !== 'unhealthy') sum += this.endpointCap(url);
    return sum;
  }

  private hasUsableEndpoint(entry: ModelEntry): boolean {
    return entry.urls.some((url) => this.healthFor(entry, url) !== 'unhealthy');
  }

  /** One model's health at one endpoint: the engine's there, or the model's own where that is worse. */
  private healthFor(entry: ModelEntry, url: string): ModelHealth {
    const engine = this.endpoints.get(url)?.health ?? 'unhealthy';
    const own = entry.own.get(url);
    return own && HEALTH_RANK[own] > HEALTH_RANK[engine] ? own : engine;
  }

  private retryEstimate(entry: ModelEntry): number {
    const slots = Math.max(1, this.modelCap(entry));
    const ms = Math.ceil((entry.avgServiceMs * (entry.queue.size + 1)) / slots);
    return Math.min(60_000, Math.max(1_000, ms));
  }

  private rejectQueue(entry: ModelEntry, make: () => SchedulerRejection): void {
    const waiting = entry.queue.drain();
    for (const w of waiting) {
      w.dispose();
      w.reject(make());
    }
    if (waiting.length > 0) this.changed();
  }

  private forgetIfUnused(url: string): void {
    const ep = this.endpoints.get(url);
    if (!ep || ep.inFlight > 0) return;
    for (const m of this.models.values()) if (m.urls.includes(url)) return;
    this.endpoints.delete(url);
  }

  /** Emits one 'change' (with stats) per burst of updates in the same tick. */
  private changed(): void {
    if (this.changeQueued) return;
    this.changeQueued = true;
    queueMicrotask(() => {
      this.changeQueued = false;
      this.emit('change', this.stats());
    });
  }
}

function shuttingDown(): SchedulerRejection {
  return new SchedulerRejection('cancelled', 'cancelled: the provider is shutting down', 499, undefined, 'shutting_down');
}

function cancelled(): SchedulerRejection {
  return new SchedulerRejection('cancelled', 'The request was cancelled while it waited in the queue.', 499, undefined, 'cancelled');
}

/** Every engine of a served model is down: a temporary outage, so 503 with a retry hint, never 404. */
function unavailable(model: string): SchedulerRejection {
  return new SchedulerRejection(
    'rejected',
    `Model "${model}" is unavailable: it fails its health checks on every engine serving it. It will come back once it answers them again; try again shortly.`,
    503,
    PAUSE_RETRY_MS,
    'unhealthy',
  );
}

function notifyAccepted(opts: AdmitOptions, position: number, log?: Logger): void {
  try {
    opts.onAccepted?.(position);
  } catch (err) {
    log?.warn(`onAccepted callback of ${opts.requestId} threw: ${(err as Error).message}`, { requestId: opts.requestId });
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
