// Every mapping checked against what the engine reports: a model announced under a network id that names a
// size or a quantization ("meta-llama/Llama-3.1-8B-Instruct", "…-AWQ") while the engine serving it reports
// another (llama.cpp's /v1/models meta n_params and ftype, Ollama's parameter_size and quantization_level)
// would fail the network's fingerprint check and cost the owner. Such a model is held back (not announced)
// until the owner confirms it; the finding has a stable code, shown in the console and by `doctor`. The
// engine's report is the evidence; nothing is concluded from a name alone, and where the engine reports
// nothing, nothing is claimed (the model is not held).
import type { EngineInfo, EngineModelMeta, MappingCheckView } from '../../shared/types';
import { endpointKey } from '../engine-client/url';
import { modelInfo, normalizeModelName, quantOf, sizeParameters } from '../platform/catalogue';
import type { ModelRegistry } from './registry';

/** How far a reported parameter count may be from the size an id names and still be that size (7.6 B is a "7B"). */
function sameSize(reported: number, named: number): boolean {
  return reported / named >= 0.8 && reported / named <= 1.25;
}

function fmtParams(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(n >= 1e10 ? 0 : 1)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 2)} M`;
  return `${Math.round(n / 1e3)} K`;
}

/** The first contradiction between a network id and the engine's report about the model behind it. */
export function checkMapping(id: string, engineModel: string, meta: EngineModelMeta | undefined): Omit<MappingCheckView, 'confirmed'> | undefined {
  if (!meta) return undefined;
  const named = sizeParameters(modelInfo(normalizeModelName(id)).size);
  if (named !== undefined && meta.parameters !== undefined && !sameSize(meta.parameters, named)) {
    return {
      code: 'mapping_parameters_mismatch',
      engineModel,
      text: `${id} names a ${fmtParams(named)}-parameter model, but the engine reports ${fmtParams(meta.parameters)} parameters for ${engineModel}.`,
      signature: `parameters:${engineModel}:${meta.parameters}`,
    };
  }
  const q = quantOf(id);
  const reported = quantOf(meta.quantization);
  if (q && reported && q !== reported) {
    return {
      code: 'mapping_quantization_mismatch',
      engineModel,
      text: `${id} names ${q} weights, but the engine reports ${meta.quantization} for ${engineModel}.`,
      signature: `quantization:${engineModel}:${meta.quantization}`,
    };
  }
  return undefined;
}

/**
 * The mapping findings of the registry's models, from the engines' reports: model id → finding (confirmed
 * when the owner confirmed this very finding, by its signature).
 */
export function mappingChecks(
  registry: ModelRegistry,
  engines: EngineInfo[],
  confirmed: (id: string) => string | undefined,
  /** Hold a model none of whose engines has been looked at yet ('mapping_unchecked': not a contradiction, not announced either). */
  holdUnchecked = false,
): Map<string, MappingCheckView> {
  const byUrl = new Map(engines.map((e) => [endpointKey(e.url), e]));
  const out = new Map<string, MappingCheckView>();
  for (const m of registry.all()) {
    // A mapping is a model named by the owner (models.json, a managed engine) or announced under another name
    // than the engine's own; a model an engine found here offers under its own name maps nothing.
    if (!m.fromConfig && !m.managed && !m.endpoints.some((ep) => ep.localModel && ep.localModel !== m.id)) continue;
    if (holdUnchecked && m.endpoints.length > 0 && m.endpoints.every((ep) => !byUrl.has(ep.url))) {
      out.set(m.id, {
        code: 'mapping_unchecked',
        engineModel: m.endpoints[0]!.localModel ?? m.id,
        text: `${m.id}'s engine has not been read yet.`,
        signature: 'unchecked',
        confirmed: false,
      });
      continue;
    }
    for (const ep of m.endpoints) {
      const engineModel = ep.localModel ?? m.id;
      const f = checkMapping(m.id, engineModel, byUrl.get(ep.url)?.modelMeta?.[engineModel]);
      if (f) {
        out.set(m.id, { ...f, confirmed: confirmed(m.id) === f.signature });
        break;
      }
    }
  }
  return out;
}
