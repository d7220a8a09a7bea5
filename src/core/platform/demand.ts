// Demand: which models the network pays for and how much, beside what this machine can serve —
// already serving, on disk but switched off, or pullable by an Ollama engine here — and whether the
// model fits the GPU memory (only where a size is known: the catalogue's, or the engine's file size).
import type { NetworkRate } from './rates';

export interface DemandRow {
  modelId: string;
  inputPerM: number;
  outputPerM: number;
  tier: string;
  /** serving: announced here · on_disk: an engine here has it, switched off · pullable: an Ollama engine here could pull it · none */
  here: 'serving' | 'on_disk' | 'pullable' | 'none';
  sizeGb: number | null;
  fits: 'yes' | 'no' | 'unknown';
}

export interface DemandInput {
  rates: NetworkRate[];
  announced: string[];
  /** Models an engine here has (enabled or not). */
  known: string[];
  ollama: boolean;
  vramGb: number | null;
  sizeGb?: (modelId: string) => number | undefined;
}

export function demandRows(i: DemandInput): DemandRow[] {
  const announced = new Set(i.announced);
  const known = new Set(i.known);
  return [...i.rates]
    .sort((a, b) => b.outputPerM - a.outputPerM || b.inputPerM - a.inputPerM || a.modelId.localeCompare(b.modelId))
    .map((r) => {
      const size = i.sizeGb?.(r.modelId);
      const sizeGb = size !== undefined && Number.isFinite(size) && size > 0 ? size : null;
      return {
        modelId: r.modelId,
        inputPerM: r.inputPerM,
        outputPerM: r.outputPerM,
        tier: r.tier,
        here: announced.has(r.modelId) ? 'serving' : known.has(r.modelId) ? 'on_disk' : i.ollama ? 'pullable' : 'none',
        sizeGb,
        // Weights plus a little room for the KV cache: a model needs about 1.2 × its size.
        fits: sizeGb === null || i.vramGb === null ? 'unknown' : sizeGb * 1.2 <= i.vramGb ? 'yes' : 'no',
      };
    });
}
