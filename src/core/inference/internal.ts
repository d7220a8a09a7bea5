// Internal generations: the agent's own engine calls (warmup, verify, benchmark). They take the same
// path as any request — admission by the scheduler, the call on the LEASE's endpoint (never one picked
// beside the scheduler), the RequestBook, then the ledger through the book — so they count against
// MaxConcurrentPerEndpoint and show in Requests.
//
// How they are recorded: the book and ledger source is 'local' (every earnings figure, the hub's
// delivery tracking and the hub-only sums key on source = 'hub', so they are never hub earnings), and
// the request id says what it was: `warmup-…`, `verify-…`, `benchmark-…` (the console's test prompt,
// a plain local request through InferenceRunner.run, is `try-…`). They queue in the lane of whoever
// asked (the hub's for hub messages), so a busy local gateway cannot starve a hub challenge.
import crypto from 'node:crypto';
import type { RequestSource } from '../../shared/types';
import { EngineHttpError, type EngineEndpoint, type TokenUsage } from '../engine/types';
import { SchedulerRejection, type Lease } from '../scheduler/types';
import type { RunnerDeps } from './runner';

export type InternalKind = 'warmup' | 'verify' | 'benchmark';

/** Request ids of internal generations: kept out of the heartbeat's request metrics (they serve no client). */
export const INTERNAL_ID = /^(warmup|verify|benchmark)-/;

export interface InternalGeneration<T> {
  kind: InternalKind;
  model: string;
  /** Who asked: the scheduler lane it queues in. */
  lane: RequestSource;
  signal?: AbortSignal;
  /** The engine call, on the endpoint the lease names. Its usage (when the engine reported one) is booked. */
  call(endpoint: EngineEndpoint, signal: AbortSignal | undefined): Promise<T & { statusCode?: number; usage?: TokenUsage }>;
}

/** Runs one internal generation: admission -> the lease's endpoint -> book (-> ledger). Throws what the scheduler or engine threw. */
export async function generateInternal<T>(deps: Pick<RunnerDeps, 'registry' | 'admit' | 'book'>, g: InternalGeneration<T>): Promise<T> {
  const id = `${g.kind}-${crypto.randomUUID()}`;
  deps.book.begin(id, 'local', g.model, false);
  const fail = (e: unknown, status: 'error' | 'rejected', statusCode: number | undefined): never => {
    const aborted = g.signal?.aborted === true;
    deps.book.finish(id, {
      status: aborted ? 'cancelled' : status,
      tokensIn: 0,
      tokensOut: 0,
      estimated: false,
      statusCode: aborted ? 499 : (statusCode ?? 502),
      error: e instanceof Error ? e.message : String(e),
    });
    throw e;
  };
  let lease: Lease;
  try {
    lease = await deps.admit(g.model, { requestId: id, source: g.lane, ...(g.signal ? { signal: g.signal } : {}) });
  } catch (e) {
    return fail(e, 'rejected', e instanceof SchedulerRejection ? e.statusCode : 503);
  }
  try {
    const endpoint = deps.registry.endpoint(g.model, lease.endpointUrl) ?? { url: lease.endpointUrl };
    deps.book.running(id, endpoint.url);
    const r = await g.call(endpoint, g.signal);
    deps.book.finish(id, {
      status: 'ok',
      // Only what the engine reported: an internal generation has nothing to estimate for.
      tokensIn: r.usage?.promptTokens ?? 0,
      tokensOut: r.usage?.completionTokens ?? 0,
      estimated: false,
      statusCode: r.statusCode ?? 200,
    });
    return r;
  } catch (e) {
    return fail(e, 'error', e instanceof EngineHttpError ? e.statusCode : undefined);
  } finally {
    lease.release();
  }
}
