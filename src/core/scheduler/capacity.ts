// The per-endpoint concurrency limit the scheduler applies: a number in config.toml
// (MaxConcurrentPerEndpoint) wins; with "auto" (the default) it is what the engine says it runs at once,
// so requests beyond the engine's slots wait in the agent's own queue (with positions, and without
// the engine's headers timeout running) instead of waiting silently inside the engine.
import type { EngineCapacity, EngineLoad } from '../engine-client/capacity';

export interface EndpointLimit {
  max: number;
  source: string;
}

/**
 * What the engine told us, as a slot count: its published capacity, or for vLLM (which does not
 * publish max_num_seqs) the number running while requests queue inside it (it is full at that count).
 */
export function engineSlots(capacity?: EngineCapacity, load?: EngineLoad): EngineCapacity | undefined {
  if (capacity) return capacity;
  if (load && load.waiting > 0)
    return { slots: Math.max(1, Math.floor(load.running)), source: `vLLM /metrics: ${load.waiting} waiting at ${load.running} running` };
  return undefined;
}

export function endpointLimit(config: { capacityAuto: boolean; maxConcurrentPerEndpoint: number }, engine?: EngineCapacity): EndpointLimit {
  if (!config.capacityAuto) return { max: config.maxConcurrentPerEndpoint, source: 'config MaxConcurrentPerEndpoint' };
  if (engine) return { max: engine.slots, source: engine.source };
  return { max: config.maxConcurrentPerEndpoint, source: 'default (the engine does not say)' };
}
