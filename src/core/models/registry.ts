// ModelRegistry: which models this provider serves, where, whether the owner enabled them, and how
// healthy they are. Sources: models.json (enabled by default, or as config.toml's Models says) and
// engines found by discovery (off until the owner enables them).
import type { DeepCheckView, EndpointCondition, EngineInfo, EngineType, MappingCheckView, ModelHealth, ModelState } from '../../shared/types';
import type { ModelEntry } from '../config/config';
import type { EngineEndpoint } from '../engine-client/types';
import { endpointKey } from '../engine-client/url';
import { chatCompatible } from '../engine-client/category';

const RANK: Record<ModelHealth, number> = { healthy: 2, degraded: 1, unhealthy: 0 };

/** The deep check's failures that are one model's at one endpoint (a refused key or a loading engine are the endpoint's). */
const MODEL_FAILURES: ReadonlySet<string> = new Set(['no_response', 'engine_error', 'not_served']);

function modelFailure(d: DeepCheckView | undefined): boolean {
  return !!d && !d.ok && d.code !== undefined && MODEL_FAILURES.has(d.code);
}

function warmupOf(w: WarmupFailureView | undefined): { warmupFailure?: WarmupFailureView } {
  return w ? { warmupFailure: { ...w } } : {};
}

/** A failed warmup of one model, as the Models page and the hub's health read it. */
export interface WarmupFailureView {
  at: number;
  /** Stable (WarmupProblem): budget_exhausted, leaked_delimiter, role_boundary, empty_reply, wrong_role, no_reply, engine_error. */
  code: string;
  error: string;
}

/**
 * The name a discovered engine model is announced under: the engine's own id, unless that is a local
 * file path (llama-server reports its -m path when started without --alias), then the file's stem
 * ("/srv/models/tiny.gguf" -> "tiny", split GGUFs lose their "-00001-of-00003"). Hugging Face ids
 * ("org/name") are kept as they are.
 */
export function announcedName(engineModel: string): string {
  const looksLikePath =
    /^(\/|~|\.{1,2}[\\/]|[A-Za-z]:[\\/])/.test(engineModel) || engineModel.includes('\\') || /\.(gguf|bin|safetensors|ggml)$/i.test(engineModel);
  if (!looksLikePath) return engineModel;
  const file = engineModel.split(/[\\/]/).filter(Boolean).pop() ?? engineModel;
  const stem = file.replace(/\.(gguf|bin|safetensors|ggml)$/i, '').replace(/-\d{5}-of-\d{5}$/, '');
  return stem || engineModel;
}

export interface EndpointCapacityInfo {
  slots: number;
  source: string;
}

export interface RegisteredModel {
  id: string;
  endpoints: EngineEndpoint[];
  enabled: boolean;
  fromConfig: boolean;
  maxConcurrent?: number;
  maxQueue?: number;
  entry?: ModelEntry;
  /** Run by this agent (src/core/managed/): on unless the owner switched it off. */
  managed?: boolean;
}

export interface ModelPrefs {
  enabled?: boolean;
  maxConcurrent?: number;
  maxQueue?: number;
}

export class ModelRegistry {
  private models = new Map<string, RegisteredModel>();
  private readonly endpointHealth = new Map<string, ModelHealth>();
  private readonly endpointErrors = new Map<string, string>();
  private readonly endpointConditions = new Map<string, EndpointCondition>();
  private readonly endpointCapacity = new Map<string, EndpointCapacityInfo>();
  /** Mappings the engine's report contradicts (models/mapping-check.ts): held back unless confirmed. */
  private mappings = new Map<string, MappingCheckView>();
  /** The last deep health check per endpoint and engine model name ("url name"). */
  private readonly deepChecks = new Map<string, DeepCheckView>();
  /** The last failed warmup per announced id (forgotten when one passes). */
  private readonly warmups = new Map<string, WarmupFailureView>();

  /** Rebuilds the set from config and discovery; keeps the owner's choices in `prefs`. */
  rebuild(opts: {
    entries: Record<string, ModelEntry>;
    configModels: string[];
    engines: EngineInfo[];
    prefs: Record<string, ModelPrefs>;
    /** The engines this agent runs: catalogue id → their endpoint (served beside any models.json entry). */
    managed?: Record<string, ModelEntry>;
  }): void {
    const next = new Map<string, RegisteredModel>();
    const add = (id: string, ep: EngineEndpoint, fromConfig: boolean, entry?: ModelEntry): void => {
      const m = next.get(id) ?? { id, endpoints: [], enabled: false, fromConfig, ...(entry ? { entry } : {}) };
      if (!m.endpoints.some((e) => e.url === ep.url)) m.endpoints.push(ep);
      m.fromConfig ||= fromConfig;
      next.set(id, m);
    };
    for (const [id, e] of Object.entries(opts.entries)) {
      add(
        id,
        {
          url: endpointKey(e.endpoint),
          ...(e.local_model ? { localModel: e.local_model } : {}),
          ...(e.api_key ? { apiKey: e.api_key } : {}),
        },
        true,
        e,
      );
    }
    for (const [id, e] of Object.entries(opts.managed ?? {})) {
      add(id, { url: endpointKey(e.endpoint), localModel: id, ...(e.api_key ? { apiKey: e.api_key } : {}) }, true, next.get(id)?.entry ?? e);
      next.get(id)!.managed = true;
    }
    const typeByUrl = new Map<string, EngineType>();
    // An engine that stopped answering keeps its last-known models: they stay in the set, shown as down
    // with the reason and still probed, so the engine serves again as soon as it answers.
    for (const eng of opts.engines) {
      const url = endpointKey(eng.url);
      typeByUrl.set(url, eng.type);
      for (const model of eng.models) {
        // A model the config already maps to this engine (under another hub-facing id) is not repeated.
        const known = [...next.values()].some((m) => m.endpoints.some((ep) => ep.url === url && (ep.localModel ?? m.id) === model));
        const name = announcedName(model);
        if (!known) add(name, { url, engineType: eng.type, ...(name !== model ? { localModel: model } : {}) }, false);
      }
    }
    for (const m of next.values()) {
      for (const ep of m.endpoints) {
        const t = typeByUrl.get(ep.url);
        if (t && !ep.engineType) ep.engineType = t;
      }
      const pref = opts.prefs[m.id] ?? {};
      // config.toml's Models names what to serve (models.json or discovered); empty = every models.json entry.
      // A model the owner asked this agent to run is served unless switched off.
      const defaultOn = m.managed === true || (opts.configModels.length === 0 ? m.fromConfig : opts.configModels.includes(m.id));
      m.enabled = pref.enabled ?? defaultOn;
      if (pref.maxConcurrent !== undefined) m.maxConcurrent = pref.maxConcurrent;
      else if (m.entry?.max_concurrent !== undefined) m.maxConcurrent = m.entry.max_concurrent;
      if (pref.maxQueue !== undefined) m.maxQueue = pref.maxQueue;
    }
    this.models = next;
  }

  get(id: string): RegisteredModel | undefined {
    return this.models.get(id);
  }

  all(): RegisteredModel[] {
    return [...this.models.values()].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Enabled models that have somewhere to run, and no contradiction the owner has not confirmed: what the hub is told we serve. */
  announced(): string[] {
    return this.all()
      .filter((m) => m.enabled && m.endpoints.length > 0 && !this.held(m.id))
      .map((m) => m.id);
  }

  /** The mapping findings now (replacing the last ones). */
  setMappingChecks(checks: Map<string, MappingCheckView>): void {
    this.mappings = checks;
  }

  mappingOf(id: string): MappingCheckView | undefined {
    return this.mappings.get(id);
  }

  /** Whether a contradiction holds the model back (found, not confirmed by the owner). */
  held(id: string): boolean {
    const f = this.mappings.get(id);
    return f !== undefined && !f.confirmed;
  }

  /**
   * Unique endpoints of enabled models, with the key their health check needs and the models it may ask (by the
   * engine's name). A `quiet` model is never asked with a chat: a model held off its paused GPU would be loaded
   * back onto it by the deep check.
   */
  healthTargets(
    quiet: (id: string) => boolean = () => false,
  ): Array<{ url: string; apiKey?: string; engineType?: EngineType; models: Array<{ name: string; chat: boolean }> }> {
    const byUrl = new Map<string, { url: string; apiKey?: string; engineType?: EngineType; models: Array<{ name: string; chat: boolean }> }>();
    for (const m of this.models.values()) {
      if (!m.enabled) continue;
      for (const ep of m.endpoints) {
        const prev = byUrl.get(ep.url);
        const apiKey = ep.apiKey ?? prev?.apiKey;
        const engineType = ep.engineType ?? prev?.engineType;
        const models = [...(prev?.models ?? []), { name: ep.localModel ?? m.id, chat: chatCompatible(m.entry?.category) && !quiet(m.id) }];
        byUrl.set(ep.url, { url: ep.url, ...(apiKey ? { apiKey } : {}), ...(engineType ? { engineType } : {}), models });
      }
    }
    return [...byUrl.values()];
  }

  /** The deep health check's last answer for one engine model at one endpoint; true when it changed the model's health. */
  setDeepCheck(url: string, engineModel: string, check: DeepCheckView): boolean {
    const key = `${url} ${engineModel}`;
    const before = modelFailure(this.deepChecks.get(key));
    this.deepChecks.set(key, check);
    return before !== modelFailure(check);
  }

  private deepCheckOf(model: RegisteredModel, ep: EngineEndpoint): DeepCheckView | undefined {
    return this.deepChecks.get(`${ep.url} ${ep.localModel ?? model.id}`);
  }

  /**
   * The last warmup of a model: a failed one (the reply does not stop, leaks the template, is empty) shows on
   * the model, degraded, until a warmup passes; undefined forgets it. True when it changed the model's health.
   */
  setWarmup(model: string, failure: WarmupFailureView | undefined): boolean {
    const before = this.warmups.has(model);
    if (failure) this.warmups.set(model, failure);
    else this.warmups.delete(model);
    return before !== !!failure;
  }

  warmupFailureOf(model: string): WarmupFailureView | undefined {
    return this.warmups.get(model);
  }

  /**
   * An endpoint's health for one model: the model's own deep check failing there (no answer, an engine error,
   * not served: the Go provider's per-model health) makes it unhealthy there whatever its neighbours do.
   */
  private healthAt(model: RegisteredModel, ep: EngineEndpoint): ModelHealth {
    return modelFailure(this.deepCheckOf(model, ep)) ? 'unhealthy' : this.endpointHealthOf(ep.url);
  }

  /** One model's own health at one endpoint (its deep check there), apart from the engine's: 'unhealthy' when it fails there. */
  modelHealthAt(model: string, url: string): ModelHealth {
    const m = this.models.get(model);
    const ep = m?.endpoints.find((e) => e.url === url);
    return m && ep && modelFailure(this.deepCheckOf(m, ep)) ? 'unhealthy' : 'healthy';
  }

  /** What the engine says about its slots (undefined: not published; the default applies). */
  setEndpointCapacity(url: string, capacity: EndpointCapacityInfo | undefined): void {
    if (capacity) this.endpointCapacity.set(url, capacity);
    else this.endpointCapacity.delete(url);
  }

  endpointCapacityOf(url: string): EndpointCapacityInfo | undefined {
    return this.endpointCapacity.get(url);
  }

  endpoint(model: string, url: string): EngineEndpoint | undefined {
    return this.models.get(model)?.endpoints.find((e) => e.url === url);
  }

  setEndpointHealth(url: string, health: ModelHealth, error?: string, condition?: EndpointCondition): void {
    this.endpointHealth.set(url, health);
    if (error) this.endpointErrors.set(url, error);
    else this.endpointErrors.delete(url);
    if (condition) this.endpointConditions.set(url, condition);
    else this.endpointConditions.delete(url);
  }

  /**
   * The health monitor's view of every endpoint it watches replaces what was held before, so an
   * endpoint that left the watch list and came back (engine gone and back, model switched off and on)
   * never keeps a state from before. `states` is the one source; endpoints not in it read as healthy.
   */
  syncHealth(states: Array<{ url: string; health: ModelHealth; lastError?: string; condition?: EndpointCondition }>): void {
    this.endpointHealth.clear();
    this.endpointErrors.clear();
    this.endpointConditions.clear();
    for (const st of states) this.setEndpointHealth(st.url, st.health, st.lastError, st.condition);
  }

  endpointConditionOf(url: string): EndpointCondition | undefined {
    return this.endpointConditions.get(url);
  }

  endpointHealthOf(url: string): ModelHealth {
    return this.endpointHealth.get(url) ?? 'healthy';
  }

  healthOf(model: string): ModelHealth {
    const m = this.models.get(model);
    if (!m || m.endpoints.length === 0) return 'unhealthy';
    const best = m.endpoints.map((e) => this.healthAt(m, e)).reduce((b, h) => (RANK[h] > RANK[b] ? h : b), 'unhealthy' as ModelHealth);
    // It answers, but its warmup showed replies no client should get: never "healthy" until a warmup passes.
    return best === 'healthy' && this.warmups.has(model) ? 'degraded' : best;
  }

  healthMap(): Record<string, ModelHealth> {
    return Object.fromEntries(this.announced().map((id) => [id, this.healthOf(id)]));
  }

  /** The models as the console shows them; counts come from the scheduler. */
  view(
    counts: (model: string) => {
      inFlight: number;
      queued: number;
      endpointInFlight: (url: string) => number;
      maxConcurrent: number;
      maxQueue: number;
      /** The scheduler's limit for one endpoint and where it comes from. */
      endpointCap?: (url: string) => { max: number; source: string } | undefined;
    },
  ): ModelState[] {
    return this.all().map((m) => {
      const c = counts(m.id);
      return {
        id: m.id,
        enabled: m.enabled,
        health: this.healthOf(m.id),
        ...warmupOf(this.warmups.get(m.id)),
        inFlight: c.inFlight,
        queued: c.queued,
        maxConcurrent: m.maxConcurrent ?? c.maxConcurrent,
        maxQueue: m.maxQueue ?? c.maxQueue,
        endpoints: m.endpoints.map((ep) => ({
          url: ep.url,
          engineType: ep.engineType ?? 'unknown',
          health: this.healthAt(m, ep),
          inFlight: c.endpointInFlight(ep.url),
          maxConcurrent: c.endpointCap?.(ep.url)?.max ?? m.maxConcurrent ?? c.maxConcurrent,
          consecutiveFailures: 0,
          ...(this.endpointErrors.get(ep.url) ? { lastError: this.endpointErrors.get(ep.url) } : {}),
          ...(this.endpointConditions.get(ep.url)
            ? { condition: this.endpointConditions.get(ep.url) }
            : modelFailure(this.deepCheckOf(m, ep))
              ? { condition: this.deepCheckOf(m, ep)?.code as EndpointCondition, lastError: this.deepCheckOf(m, ep)?.error }
              : {}),
          ...(this.deepCheckOf(m, ep) ? { deepCheck: this.deepCheckOf(m, ep) } : {}),
          ...(chatCompatible(m.entry?.category) ? {} : { deepCheckSkipped: true }),
          ...(c.endpointCap?.(ep.url) ? { capacitySource: c.endpointCap(ep.url)?.source } : {}),
          ...(ep.localModel && ep.localModel !== m.id ? { localModel: ep.localModel } : {}),
        })),
        ...(this.mappings.get(m.id) ? { mapping: this.mappings.get(m.id) } : {}),
      };
    });
  }
}
