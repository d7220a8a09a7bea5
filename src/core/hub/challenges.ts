// The hub's warmup, verify and benchmark messages: each answered once on the link. Their engine calls go
// through the engine-call service with their purpose (warmup, verify, benchmark): admitted in the hub's
// lane, sent to the lease's endpoint, booked as local requests (never hub earnings).
import type { WarmupResult } from '../../shared/views/models';
import type { RequestSource } from '../../shared/types';
import type { ModelRegistry } from '../models/registry';
import type { EngineRequestOptions, NonStreamResult } from '../engine-client/types';
import type { InferenceRunner } from '../inference/runner';
import type { Logger } from '../base/log';
import { out, type Inbound, type Outbound } from '../protocol/messages';
import { handleBenchmark } from './benchmark';
import { handleVerify, type ResolvedModel, type WeightsLookup } from './verify';

export interface ChallengeDeps {
  /** Loads a model and asks it one short question (the engines' warmup, wired by the root). */
  warmup: { run(model: string, lane: RequestSource): Promise<WarmupResult> };
  service: Pick<InferenceRunner, 'generate'>;
  registry: ModelRegistry;
  /** The weight manifests fingerprint challenges are answered from (src/core/weights). */
  weights?: WeightsLookup;
  send: (m: Outbound) => void;
  log: Logger;
}

export class HubChallenges {
  constructor(private readonly d: ChallengeDeps) {}

  // Each returns its promise: a rejection reaches the hub dispatch's boundary (logged, answered with a coded error).
  warmup(m: Extract<Inbound, { type: 'warmup' }>): Promise<void> {
    return this.d.warmup.run(m.payload.model_id, 'hub').then((r) => this.d.send(out.warmupResult(m.requestId, { modelId: m.payload.model_id, ...r })));
  }

  verify(m: Extract<Inbound, { type: 'verify' }>): Promise<void> {
    return handleVerify(m.payload, {
      resolve: (id) => this.resolve(id),
      complete: this.complete({ purpose: 'verify' }),
      ...(this.d.weights ? { weights: this.d.weights } : {}),
      log: this.d.log,
    }).then((reply) => this.d.send({ type: 'verify', ...(m.requestId ? { request_id: m.requestId } : {}), payload: { ...reply } }));
  }

  benchmark(m: Extract<Inbound, { type: 'benchmark' }>): Promise<void> {
    return handleBenchmark(
      m.payload,
      { resolve: (id) => this.resolve(id), complete: this.complete({ purpose: 'benchmark' }), log: this.d.log },
      m.requestId ?? '',
    ).then((reply) => this.d.send({ type: 'benchmark_response', ...(m.requestId ? { request_id: m.requestId } : {}), payload: { ...reply } }));
  }

  /** Whether the model is served here. The engine call itself goes where the lease says. */
  private resolve(model: string): ResolvedModel | undefined {
    const reg = this.d.registry.get(model);
    const ep = reg?.enabled ? reg.endpoints.find((e) => this.d.registry.endpointHealthOf(e.url) !== 'unhealthy') : undefined;
    return ep ? { endpoint: ep } : undefined;
  }

  /** The handlers' engine call: the body names the hub's model id; the lease decides the endpoint. */
  private complete({ purpose }: { purpose: 'verify' | 'benchmark' }): (o: EngineRequestOptions) => Promise<NonStreamResult> {
    return (o) =>
      this.d.service.generate({
        purpose,
        model: String(o.body.model ?? ''),
        operation: 'chat/completions',
        body: o.body,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.headersTimeoutMs !== undefined ? { timeoutMs: o.headersTimeoutMs } : {}),
      });
  }
}
