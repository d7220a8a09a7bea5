// Which engine part's events feed which: health, capacity, context windows and discovery feed the model
// set and the scheduler; the hub and the console hear of it through the feature's ports.
import type { EngineInfo, GpuSample } from '../../shared/types';
import type { ContextLengths } from '../engine-client/context-length';
import type { EngineDiscovery } from '../engine-client/discovery';
import type { CapacityChange, DeepCheckState, HealthChange, HealthMonitor } from '../engine-client/health';
import type { MinuteHistory } from '../gpu/minute-history';
import type { GpuSampler } from '../gpu/sampler';
import type { Logger } from '../base/log';
import { engineSlots } from '../scheduler/capacity';
import type { Scheduler } from '../scheduler/scheduler';
import type { ModelSync } from './model-sync';
import type { ModelRegistry } from '../models/registry';
import type { RequestBook } from '../inference/requests';
import { POLICY } from '../inference/purpose';
import type { SelfHeal } from './self-heal';

export interface EngineParts {
  health: HealthMonitor;
  discovery: EngineDiscovery;
  contexts: ContextLengths;
  registry: ModelRegistry;
  scheduler: Scheduler;
  models: ModelSync;
  book: RequestBook;
  selfHeal: SelfHeal;
  sampler?: GpuSampler;
  gpuHistory?: MinuteHistory;
}

export function wireEngines(p: EngineParts, o: { announce: () => void; modelHealth: () => void; changed: () => void; log: Logger }): void {
  p.contexts.on('change', () => o.announce());
  p.health.on('capacity', (c: CapacityChange) => {
    p.registry.setEndpointCapacity(c.url, engineSlots(c.capacity, c.load));
    p.models.rebuild();
  });
  p.health.on('change', (c: HealthChange) => {
    if (c.health === 'healthy') p.models.refreshContexts(true);
    p.registry.setEndpointHealth(c.url, c.health, c.error, c.condition);
    // An engine back after a restart: discovery re-reads its models now rather than on its next round.
    if (c.health === 'healthy' && !p.models.discoverySees(c.url)) void p.models.rescan();
    // An engine that refuses our key still gets requests when nothing else serves the model, so clients
    // learn "engine rejected the provider's key" (502) rather than a vague "unavailable"; the hub sees unhealthy.
    p.scheduler.setEndpointHealth(c.url, c.condition === 'key_rejected' ? 'degraded' : c.health);
    o.log.info(`engine ${c.url} is ${c.health}${c.error ? `: ${c.error}` : ''}`);
    o.modelHealth();
    o.changed();
  });
  // A deep check's answer shows per model; a model the engine does not serve there is unhealthy there (the hub hears it).
  p.health.on('deep', ({ url, state }: { url: string; state: DeepCheckState }) => {
    const { model, ...check } = state;
    if (p.registry.setDeepCheck(url, model, check)) {
      p.models.syncScheduler();
      o.modelHealth();
    }
    for (const id of modelsAt(p.registry, url, model)) p.selfHeal.probe(id, check.ok, check.code, check.error);
    o.changed();
  });
  // Real requests (the hub's, the owner's apps'): a model that fails half of them while its health reads fine is withdrawn.
  p.book.on('finished', (record, view) => {
    const real = view.purpose ? POLICY[view.purpose].client : true;
    if (!real) return;
    if (record.status === 'ok') p.selfHeal.request(record.model, false);
    else if (record.status === 'error' && backendAtFault(record.statusCode, record.error)) p.selfHeal.request(record.model, true);
  });
  // A withdrawal or a return changes what the hub is told: register again.
  p.selfHeal.on('change', () => {
    o.announce();
    o.changed();
  });
  p.discovery.on('change', (engines: EngineInfo[]) => p.models.setEngines(engines));
  // Each sample is kept per minute (the long GPU charts).
  p.sampler?.on('sample', (sample: GpuSample) => p.gpuHistory?.add(sample));
}

/** The announced ids served by one engine model name at one endpoint. */
function modelsAt(registry: ModelRegistry, url: string, engineModel: string): string[] {
  return registry
    .all()
    .filter((m) => m.enabled && m.endpoints.some((ep) => ep.url === url && (ep.localModel ?? m.id) === engineModel))
    .map((m) => m.id);
}

/**
 * Whether a failed request is the engine's to answer for (Go's BackendAtFault): no answer, a 5xx, a refused
 * key, the model not there. A 400/422/429 is the client's or a limiter's, except a prompt over the context
 * window: the window the hub was told of is ours to honour.
 */
export function backendAtFault(status: number | null, error: string | null): boolean {
  if (status === null || status === 0 || status >= 500) return true;
  if (status === 401 || status === 403 || status === 404) return true;
  return status === 400 && /context/i.test(error ?? '');
}
