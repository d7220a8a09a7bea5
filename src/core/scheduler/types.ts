// Contracts of admission control, shared by hub traffic and the local gateway.
import type { ModelHealth, RequestSource } from '../../shared/types';
import { CodedError } from '../../shared/bridge-error';

export interface SchedulerLimits {
  /** Concurrent requests per endpoint (default 4). */
  maxConcurrentPerEndpoint: number;
  /** Waiting requests per model beyond the running ones (default 32). Beyond it: rejected at once. */
  maxQueuePerModel: number;
  /** How long a request may wait in the queue before it is rejected (default 30 s). */
  queueTimeoutMs: number;
}

export interface SchedulerEndpoint {
  url: string;
  /** The engine's health there, shared by every model it serves. */
  health: ModelHealth;
  /**
   * This model's own health there (its deep check: the engine answers, this model fails every completion).
   * The worse of the two decides whether the model's requests go there; its neighbours are not affected.
   */
  modelHealth?: ModelHealth;
  /** Overrides maxConcurrentPerEndpoint for this endpoint. */
  maxConcurrent?: number;
}

export interface AdmitOptions {
  requestId: string;
  source: RequestSource;
  signal?: AbortSignal;
  /** Called once when the request is admitted: 0 = running now, N = N requests ahead of it. */
  onAccepted?: (queuePosition: number) => void;
}

/** What a running request holds; release() exactly once when it finishes (idempotent). */
export interface Lease {
  readonly endpointUrl: string;
  release(): void;
}

export type RejectionKind = 'rejected' | 'model_not_loaded' | 'cancelled';

/** Why the scheduler refused, finer than `kind` and stable (logs, tests); the message says it for people. */
export type RejectionReason =
  | 'shutting_down'
  | 'unknown_model'
  /** The model was switched off or its engine went away while the request waited. */
  | 'withdrawn'
  /** Serving is paused (by the owner, the schedule or a busy GPU). */
  | 'paused'
  /** Every engine serving the model is unhealthy. */
  | 'unhealthy'
  | 'queue_full'
  | 'queue_timeout'
  | 'cancelled';

export class SchedulerRejection extends Error {
  constructor(
    readonly kind: RejectionKind,
    message: string,
    /** HTTP-style status: 429 over capacity / paused, 404 unknown model, 503 every engine down or the model withdrawn, 499 cancelled. */
    readonly statusCode: number,
    /** Suggested wait before retrying, ms (set for 429). */
    readonly retryAfterMs?: number,
    /** Set by the scheduler itself; absent on a rejection made elsewhere from another error. */
    readonly reason?: RejectionReason,
  ) {
    super(message);
    this.name = 'SchedulerRejection';
  }
}

/** Why settings given to the scheduler, a rate limiter or the pause controller were refused. */
export type SchedulerConfigErrorCode = 'invalid_limits' | 'invalid_endpoints' | 'invalid_schedule';

/** Refused limits, endpoints or pause schedule; `field` is the first one at fault (`maxQueue`, `0.url`, `burst`). */
export class SchedulerConfigError extends CodedError<SchedulerConfigErrorCode> {
  override name = 'SchedulerConfigError';
}

/** One endpoint of a model as stats() reports it. inFlight counts every model's requests on that URL. */
export interface SchedulerEndpointStats {
  url: string;
  inFlight: number;
  maxConcurrent: number;
  health: ModelHealth;
}

/** One model as stats() reports it. maxConcurrent is what can run now (unhealthy endpoints excluded). */
export interface SchedulerModelStats {
  model: string;
  inFlight: number;
  queued: number;
  maxConcurrent: number;
  maxQueue: number;
  endpoints: SchedulerEndpointStats[];
}

/** Per-model overrides given to Scheduler.setModel. */
export interface ModelLimits {
  /** Concurrent requests for this model over all its endpoints (default: the sum of its endpoints' limits). */
  maxConcurrent?: number;
  /** Waiting requests for this model (default: SchedulerLimits.maxQueuePerModel). */
  maxQueue?: number;
}
