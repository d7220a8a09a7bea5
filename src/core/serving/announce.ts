// What the hub is told about this node: Go's RegisterPayload (+ v0.5's model_declarations, context windows
// and cp_version; docs/hub-dialect.md), the heartbeat, the HardwareInfo block of both, and re-registering
// when what is announced changed. The declarations are built when a register is sent and the heartbeats
// carry that very list (Go's TestDeclarationHashIsCachedUntilReregister): a fact that changes later (a
// weight hash finished, the engine's slots read) changes the announce key, so the node registers again.
import type { EngineType, GpuInventory, GpuSample, ModelHealth } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { Identity } from '../config/identity';
import type { ContextLengths, ModelContext } from '../engine-client/context-length';
import { hardwareBlock, mostCommonEngine } from '../gpu/hardware';
import { heartbeatMetrics } from '../gpu/metrics';
import {
  CAPABILITIES,
  CLIENT_NAME,
  HUB_DIALECT_VERSION,
  PROTOCOL_VERSION,
  type HeartbeatPayload,
  type HubHardware,
  type ModelDeclaration,
  type LightModelHash,
  type ModelHash,
  type RegisterPayload,
} from '../protocol/messages';
import type { ModelFacts } from '../weights/locate';
import { buildDeclaration, declaredCapacity } from '../weights/declarations';
import type { ModelRegistry } from '../models/registry';

export interface AnnounceDeps {
  identity: Identity;
  config: ProviderConfig;
  /** The app's version (client_version; cp_version is the dialect's, HUB_DIALECT_VERSION). */
  version: string;
  registry: ModelRegistry;
  contexts: ContextLengths;
  /** The models announced now ([] while paused). */
  announced: () => string[];
  /** The health of the announced models only (a withdrawn model's is not sent). */
  announcedHealth: () => Record<string, ModelHealth>;
  gpu: () => GpuInventory;
  nodeName: () => string;
  providerKey: () => string;
  /** Metrics beyond the GPU's: active requests, request figures, resume buffer. */
  metrics: () => Record<string, number>;
  latestSample: () => GpuSample | null;
  reRegister: () => void;
  /** What each model's engine says of it (weights/model-facts.ts). */
  facts?: (model: string) => ModelFacts | undefined;
  /** A model's composite weight hash, once every file is known (weights/weights.ts). */
  weightHash?: (model: string) => string | undefined;
}

/** models.json `category` (a passthrough field of the entry). */
function categoryOf(entry: unknown): string | undefined {
  const c = entry && typeof entry === 'object' ? (entry as { category?: unknown }).category : undefined;
  return typeof c === 'string' ? c : undefined;
}

/** A window for model_hashes: the owner's or an engine's; the source word only in the hub's vocabulary. */
function hashWindow(ctx: ModelContext): Pick<ModelHash, 'context_length' | 'context_source'> {
  if (!(ctx.length > 0)) return {};
  if (ctx.source === 'override' || ctx.source === 'detected') return { context_length: ctx.length, context_source: ctx.source };
  return ctx.source === 'engine' ? { context_length: ctx.length } : {};
}

export class Announcer {
  private last = '';
  /** The declarations of the last register: what every heartbeat carries until the next. */
  private declared: ModelDeclaration[] = [];
  /** The last register's model_hashes without hashes: the heartbeat's light list. */
  private lightHashes: LightModelHash[] = [];
  private sent: string[] = [];

  constructor(private readonly d: AnnounceDeps) {}

  /**
   * Sends register again when what is announced differs from what the last register sent: the model set,
   * hardware, windows, declarations. A change while no register can go (the link is down or registering)
   * is sent by the next register, or by the announce the agent makes once the link has registered.
   */
  announce(): void {
    if (this.keyOf(this.d.announced()) === this.last) return;
    this.d.reRegister();
  }

  private keyOf(models: string[]): string {
    return JSON.stringify([
      models,
      this.d.gpu().detectedAt,
      models.map((id) => this.d.contexts.get(id)),
      this.hardware()?.serving_engine,
      this.declarations(models),
    ]);
  }

  /** The models the last register announced (what its ack's registered_models answers). */
  get sentModels(): string[] {
    return this.sent;
  }

  /** Go's HardwareInfo for register and heartbeat; undefined without a GPU. */
  hardware(): HubHardware | undefined {
    const types = this.d.announced().flatMap((id) => (this.d.registry.get(id)?.endpoints ?? []).map((e) => this.engineType(e)));
    return hardwareBlock(this.d.gpu(), mostCommonEngine(types));
  }

  /** One declaration per announced model, from what the node knows now (nothing is read from an engine here). */
  declarations(models: string[] = this.d.announced()): ModelDeclaration[] {
    const { registry, contexts, config } = this.d;
    return models.map((id) => {
      const m = registry.get(id);
      const e = m?.entry;
      const facts = this.d.facts?.(id);
      const types = (m?.endpoints ?? []).map((ep) => this.engineType(ep));
      const engine = types.length > 0 && types.every((t) => t === types[0]) ? types[0] : undefined;
      const endpoints = (m?.endpoints ?? []).map((ep, i) => ({ url: ep.url, ...(types[i] ? { engineType: types[i] } : {}) }));
      const capacity = m
        ? declaredCapacity({ ...(m.maxConcurrent !== undefined ? { maxConcurrent: m.maxConcurrent } : {}), endpoints }, config.agent, (url) =>
            registry.endpointCapacityOf(url),
          )
        : undefined;
      const weightHash = this.d.weightHash?.(id);
      return buildDeclaration({
        modelId: id,
        ...(categoryOf(e) ? { category: categoryOf(e) } : {}),
        ...(facts?.modalities ? { engineModalities: facts.modalities } : {}),
        ...(engine ? { engine } : {}),
        ...(e?.format ? { format: e.format } : {}),
        ...(e?.quantization ? { quantization: e.quantization } : {}),
        ...(facts?.quantization ? { engineQuantization: facts.quantization } : {}),
        context: contexts.get(id),
        ...(capacity !== undefined ? { capacity } : {}),
        ...(weightHash ? { weightHash } : {}),
      });
    });
  }

  register(): RegisterPayload {
    const { identity, registry, contexts } = this.d;
    const models = this.d.announced();
    const hardware = this.hardware();
    this.declared = this.declarations(models);
    this.sent = models;
    this.last = this.keyOf(models);
    const modelHashes = models.map((id): ModelHash => {
      const e = registry.get(id)?.entry;
      const hash = this.d.weightHash?.(id);
      // Never a hash_algo without its hash (Go's omitempty on both).
      return {
        model_id: id,
        ...(hash ? { weight_hash: hash, hash_algo: 'sha256' } : {}),
        ...(e?.format ? { format: e.format } : {}),
        ...(e?.quantization ? { quantization: e.quantization } : {}),
        ...hashWindow(contexts.get(id)),
      };
    });
    this.lightHashes = modelHashes.map(({ weight_hash: _h, hash_algo: _a, ...light }) => light);
    return {
      node_id: identity.nodeId,
      provider_id: identity.nodeId,
      worker_addr: identity.nodeId,
      owner_addr: this.d.config.agent.ownerAddr,
      token: this.d.providerKey(),
      models,
      model_hashes: modelHashes,
      model_declarations: this.declared,
      capabilities: [...CAPABILITIES],
      ...(hardware ? { hardware } : {}),
      cp_version: HUB_DIALECT_VERSION,
      client: CLIENT_NAME,
      client_version: this.d.version,
      node_name: this.d.nodeName(),
      protocol_version: PROTOCOL_VERSION,
    };
  }

  heartbeat(): HeartbeatPayload {
    const hardware = this.hardware();
    return {
      node_id: this.d.identity.nodeId,
      provider_id: this.d.identity.nodeId,
      timestamp: Math.floor(Date.now() / 1000),
      models: this.d.announced(),
      model_health: this.d.announcedHealth(),
      metrics: { ...heartbeatMetrics(this.d.latestSample()), ...this.d.metrics() },
      ...(hardware ? { hardware } : {}),
      model_declarations: this.declared,
      model_hashes: this.lightHashes,
    };
  }

  private engineType(e: { url: string; engineType?: EngineType }): EngineType | undefined {
    return e.engineType && e.engineType !== 'unknown' ? e.engineType : this.d.contexts.typeOf(e.url);
  }
}
