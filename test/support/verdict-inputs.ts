// Verdict inputs where every fact is known and good: one healthy model on one engine, a catalogue read that lists
// it, a price list that rates it. A test changes the one fact it is about, so any other finding is a regression.
import type { VerdictInputs } from '../../src/core/bridge/verdict';
import type { ModelState } from '../../src/shared/types';
import type { CatalogueView } from '../../src/shared/views/snapshot';

/** A switched-on model on one llama.cpp engine; `health` also sets its endpoint's (unhealthy: the engine is down). */
export const servedModel = (id: string, o: Partial<ModelState> = {}): ModelState => ({
  id,
  enabled: true,
  health: 'healthy',
  endpoints: [
    {
      url: 'http://127.0.0.1:8080',
      engineType: 'llamacpp',
      health: o.health ?? 'healthy',
      inFlight: 0,
      maxConcurrent: 1,
      consecutiveFailures: 0,
      ...(o.health === 'unhealthy' ? { condition: 'down' as const } : {}),
    },
  ],
  inFlight: 0,
  queued: 0,
  maxConcurrent: 1,
  maxQueue: 8,
  ...o,
});

/** A catalogue read that lists `ids`. */
export const listedCatalogue = (ids: string[]): CatalogueView => ({
  state: 'ok',
  url: 'http://p/api/v1/models',
  fetchedAt: 1,
  size: ids.length,
  models: Object.fromEntries(ids.map((id) => [id, { known: true, source: 'engine' as const, suggestions: [] }])),
});

/** Serving model `a`, routed and priced, with `o` over it. */
export function knownInputs(o: Partial<VerdictInputs> = {}): VerdictInputs {
  return {
    running: true,
    hasKey: true,
    hubEnabled: true,
    link: { state: 'connected' },
    pause: { paused: false },
    models: [servedModel('a')],
    catalogue: listedCatalogue(['a']),
    pricing: { known: true, priced: ['a'] },
    earningsEnabled: true,
    ...o,
  };
}
