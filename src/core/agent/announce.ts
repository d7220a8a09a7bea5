// What the hub is told about this node: Go's RegisterPayload (+ v0.5's context_length and cp_version;
// docs/hub-dialect.md), the heartbeat, the HardwareInfo block of both, and re-registering when the
// announced set changed.
import type { GpuInventory, GpuSample } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { Identity } from '../config/identity';
import type { ContextLengths } from '../engine/context-length';
import { hardwareBlock, mostCommonEngine } from '../gpu/hardware';
import { heartbeatMetrics } from '../gpu/metrics';
import { CAPABILITIES, PROTOCOL_VERSION, type HeartbeatPayload, type HubHardware, type ModelHash, type RegisterPayload } from '../protocol/messages';
import type { ModelRegistry } from './models';

export interface AnnounceDeps {
  identity: Identity;
  config: ProviderConfig;
  version: string;
  registry: ModelRegistry;
  contexts: ContextLengths;
  /** The models announced now ([] while paused). */
  announced: () => string[];
  gpu: () => GpuInventory;
  nodeName: () => string;
  providerKey: () => string;
  /** Metrics beyond the GPU's: active requests, request figures, resume buffer. */
  metrics: () => Record<string, number>;
  latestSample: () => GpuSample | null;
  reRegister: () => void;
}

export class Announcer {
  private last = '';

  constructor(private readonly d: AnnounceDeps) {}

  /** Sends register again when the announced model set (or hardware) changed. */
  announce(): void {
    const models = this.d.announced();
    const key = JSON.stringify([models, this.d.gpu().detectedAt, models.map((id) => this.d.contexts.get(id)), this.hardware()?.serving_engine]);
    if (key === this.last) return;
    this.last = key;
    this.d.reRegister();
  }

  /** Go's HardwareInfo for register and heartbeat; undefined without a GPU. */
  hardware(): HubHardware | undefined {
    const types = this.d.announced().flatMap((id) =>
      (this.d.registry.get(id)?.endpoints ?? []).map((e) => (e.engineType && e.engineType !== 'unknown' ? e.engineType : this.d.contexts.typeOf(e.url))),
    );
    return hardwareBlock(this.d.gpu(), mostCommonEngine(types));
  }

  register(): RegisterPayload {
    const { identity, registry, contexts } = this.d;
    const models = this.d.announced();
    const hardware = this.hardware();
    return {
      node_id: identity.nodeId,
      provider_id: identity.nodeId,
      worker_addr: identity.nodeId,
      owner_addr: this.d.config.agent.ownerAddr,
      token: this.d.providerKey(),
      models,
      model_hashes: models.map((id): ModelHash => {
        const e = registry.get(id)?.entry;
        const ctx = contexts.get(id);
        // No weight hash is computed here, so no hash_algo either (never an algorithm with an empty hash).
        return {
          model_id: id,
          ...(e?.format ? { format: e.format } : {}),
          ...(e?.quantization ? { quantization: e.quantization } : {}),
          ...(ctx.length > 0 && (ctx.source === 'override' || ctx.source === 'detected') ? { context_length: ctx.length, context_source: ctx.source } : {}),
        };
      }),
      capabilities: [...CAPABILITIES],
      ...(hardware ? { hardware } : {}),
      cp_version: this.d.version,
      node_name: this.d.nodeName(),
      protocol_version: PROTOCOL_VERSION,
    };
  }

  heartbeat(): HeartbeatPayload {
    const hardware = this.hardware();
    return {
      node_id: this.d.identity.nodeId,
      timestamp: Math.floor(Date.now() / 1000),
      models: this.d.announced(),
      model_health: this.d.registry.healthMap(),
      metrics: { ...heartbeatMetrics(this.d.latestSample()), ...this.d.metrics() },
      ...(hardware ? { hardware } : {}),
    };
  }
}
