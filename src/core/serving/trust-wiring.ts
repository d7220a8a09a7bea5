// What the node declares and proves, and what the hub says back: each announce reads the engines' facts
// of new models (where their files are, their precision, what they read) and syncs the weights; a
// model's facts or weights that change make the node register again (its declarations changed); each
// register ack records the hub's view; an engine back from a restart is read again (it may serve other
// weights now). The console hears of each.
import type { HealthChange, HealthMonitor } from '../engine-client/health';
import type { HubLink } from '../hub/link';
import type { HubView } from '../hub/hub-view';
import type { ModelFactsBook, FactsTarget } from '../weights/model-facts';
import type { Weights } from '../weights/weights';
import type { Announcer } from './announce';
import type { ModelRegistry } from '../models/registry';

export interface TrustParts {
  link: HubLink;
  health: HealthMonitor;
  registry: ModelRegistry;
  announcer: Announcer;
  hubView: HubView;
  facts: ModelFactsBook;
  weights: Weights;
  /** The models announced now ([] while paused: their facts are kept, not re-read). */
  announced: () => string[];
}

/** The engines of the models the hub is told of, as the facts book reads them. */
export function factsTargets(registry: ModelRegistry, models: string[]): FactsTarget[] {
  return models.map((id) => ({
    model: id,
    endpoints: (registry.get(id)?.endpoints ?? []).map((ep) => ({
      url: ep.url,
      ...(ep.engineType ? { engineType: ep.engineType } : {}),
      ...(ep.apiKey ? { apiKey: ep.apiKey } : {}),
      ...(ep.localModel ? { localModel: ep.localModel } : {}),
    })),
  }));
}

export function wireTrust(p: TrustParts, o: { announce: () => void; snapshot: () => void }): void {
  p.link.on('registerAck', (ack) => p.hubView.record(ack, p.announcer.sentModels));
  // What changed while the link was registering (a hash finished, slots read) goes out now.
  p.link.on('registered', () => o.announce());
  p.hubView.on('change', () => o.snapshot());
  p.facts.on('change', () => o.announce());
  p.weights.on('change', () => o.announce());
  p.weights.on('progress', () => o.snapshot());
  p.health.on('change', (c: HealthChange) => {
    if (c.health !== 'healthy') return;
    const models = p.announced().filter((id) => p.registry.get(id)?.endpoints.some((ep) => ep.url === c.url));
    if (models.length > 0) void p.facts.refresh(factsTargets(p.registry, p.announced()), [c.url]);
  });
}
