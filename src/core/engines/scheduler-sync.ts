// The scheduler follows the model registry: each enabled model with its endpoints (health, and the
// per-endpoint limit from config and what the engine reports), models no longer enabled removed.
import { endpointLimit } from '../scheduler/capacity';
import type { Scheduler } from '../scheduler/scheduler';
import type { ModelRegistry } from '../models/registry';

export function syncScheduler(registry: ModelRegistry, scheduler: Scheduler, agent: Parameters<typeof endpointLimit>[0]): void {
  const enabled = new Set(registry.announced());
  for (const st of scheduler.stats()) if (!enabled.has(st.model)) scheduler.removeModel(st.model);
  for (const m of registry.all()) {
    if (!enabled.has(m.id)) continue;
    scheduler.setModel(
      m.id,
      m.endpoints.map((ep) => ({
        url: ep.url,
        // A key the engine refuses: still tried when nothing else serves the model, so clients learn why.
        health: registry.endpointConditionOf(ep.url) === 'key_rejected' ? 'degraded' : registry.endpointHealthOf(ep.url),
        // A model failing its own deep check there gets no requests there; its neighbours on that engine still do.
        modelHealth: registry.modelHealthAt(m.id, ep.url),
        maxConcurrent: endpointLimit(agent, registry.endpointCapacityOf(ep.url)).max,
      })),
      { ...(m.maxConcurrent !== undefined ? { maxConcurrent: m.maxConcurrent } : {}), ...(m.maxQueue !== undefined ? { maxQueue: m.maxQueue } : {}) },
    );
  }
}
