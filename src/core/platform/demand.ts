// Demand: which models the network pays for and how much, beside what this machine can serve —
// already serving, on disk but switched off (under the network's id, or under an Ollama tag that is
// that model), or pullable by an Ollama engine here — and whether it fits the GPU memory. The fit uses
// real figures only: the network's min_vram_gb when model-demand gives it, else the size on disk Ollama
// reports (/api/tags); without either it stays unknown.
import type { DemandRowView } from '../../shared/views/demand';
import type { OllamaLocalModel } from '../engine-client/ollama-tags';
import type { EngineModelMeta } from '../../shared/types';
import { parameterCount } from '../engine-client/model-meta';
import { matchModel } from './catalogue';
import type { NetworkRate } from './rates';
import { CodedError } from '../../shared/bridge-error';

export type DemandRow = DemandRowView;

/** Why a pull or "serve this" was refused: not an Ollama engine here, not an Ollama model name, an id the
 * network lists no rate for, no such model on disk, an entry the owner wrote in models.json, or no models.json. */
export type DemandErrorCode = 'not_local_engine' | 'not_model_name' | 'not_network_model' | 'not_on_disk' | 'already_mapped' | 'no_models_file';

/** A refused pull or "serve this"; `field` is the argument at fault (engineUrl, model, networkId, modelId). */
export class DemandError extends CodedError<DemandErrorCode> {
  override name = 'DemandError';
}

export interface DemandInput {
  rates: NetworkRate[];
  announced: string[];
  /** Models an engine here has (enabled or not), by the id they would be announced under. */
  known: string[];
  ollama: boolean;
  vramGb: number | null;
  /** What the Ollama engines here have on disk (their /api/tags). */
  onDisk?: Array<{ engineUrl: string; model: OllamaLocalModel }>;
}

const GIB = 1024 ** 3;

/** A match this sure, and only this, lets a local name be announced as a network id: the same family,
 * version and size, an alias, or the same normalised name (qwen2.5:7b is Qwen/Qwen2.5-7B-Instruct,
 * qwen2.5:3b is not). Announcing the wrong model under a paid id would be worse than not serving it. */
const SURE = 1;

/** What Ollama's /api/tags says of a model, as catalogue matching reads it. */
function ollamaMeta(m: OllamaLocalModel): EngineModelMeta | undefined {
  const parameters = parameterCount(m.parameterSize);
  if (parameters === undefined && !m.quantization) return undefined;
  return { ...(parameters !== undefined ? { parameters } : {}), ...(m.quantization ? { quantization: m.quantization } : {}) };
}

/** Whether `localName` (an engine's own name, such as an Ollama tag) is certainly `networkId`. */
export function certainlyIs(localName: string, networkId: string, meta?: EngineModelMeta): boolean {
  const m = matchModel(localName, [{ id: networkId }], meta);
  return m !== undefined && m.confidence >= SURE;
}

/** network id → the model on disk that is it. Only a sure match counts (SURE). */
export function onDiskMatches(rates: NetworkRate[], onDisk: DemandInput['onDisk'] = []): Map<string, { engineUrl: string; model: OllamaLocalModel }> {
  const ids = rates.map((r) => ({ id: r.modelId }));
  const out = new Map<string, { engineUrl: string; model: OllamaLocalModel }>();
  for (const d of onDisk) {
    const m = matchModel(d.model.name, ids, ollamaMeta(d.model));
    if (m && m.confidence >= SURE && !out.has(m.id)) out.set(m.id, d);
  }
  return out;
}

export function demandRows(i: DemandInput): DemandRow[] {
  const announced = new Set(i.announced);
  const known = new Set(i.known);
  const matched = onDiskMatches(i.rates, i.onDisk);
  return [...i.rates]
    .sort((a, b) => b.outputPerM - a.outputPerM || b.inputPerM - a.inputPerM || a.modelId.localeCompare(b.modelId))
    .map((r) => {
      const disk = matched.get(r.modelId);
      const sizeGb = disk?.model.sizeBytes !== undefined ? Math.round((disk.model.sizeBytes / GIB) * 100) / 100 : null;
      const minVramGb = r.minVramGb ?? null;
      const here: DemandRow['here'] = announced.has(r.modelId) ? 'serving' : known.has(r.modelId) || disk ? 'on_disk' : i.ollama ? 'pullable' : 'none';
      // Weights plus a little room for the KV cache: a model needs about 1.2 × its size on disk.
      const fits =
        i.vramGb === null
          ? 'unknown'
          : minVramGb !== null
            ? minVramGb <= i.vramGb
              ? 'yes'
              : 'no'
            : sizeGb !== null
              ? sizeGb * 1.2 <= i.vramGb
                ? 'yes'
                : 'no'
              : 'unknown';
      return {
        modelId: r.modelId,
        inputPerM: r.inputPerM,
        outputPerM: r.outputPerM,
        tier: r.tier,
        here,
        ...(here === 'on_disk' && !known.has(r.modelId) && disk ? { local: { engineUrl: disk.engineUrl, model: disk.model.name } } : {}),
        minVramGb,
        sizeGb,
        ...(disk?.model.parameterSize ? { parameterSize: disk.model.parameterSize } : {}),
        ...(disk?.model.quantization ? { quantization: disk.model.quantization } : {}),
        fits,
      };
    });
}
