// What the context-window check probes for the announced models: each one's endpoints and, when models.json
// sets `context_length`, that override (engine/context-length.ts then asks the engine what it really runs).
// One copy for the running agent (engines/model-sync.ts) and `doctor`, so both check the same windows.
import type { ContextTarget } from '../engine-client/context-length';
import type { ModelRegistry } from './registry';

export function contextTargets(registry: Pick<ModelRegistry, 'get'>, ids: string[]): ContextTarget[] {
  return ids.map((id) => {
    const m = registry.get(id);
    return { model: id, endpoints: m?.endpoints ?? [], ...(m?.entry?.context_length ? { override: m.entry.context_length } : {}) };
  });
}
