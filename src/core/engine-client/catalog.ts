// The model catalogue: which endpoints serve which model id, merging discovered engines with
// models.json. A model can be served by several endpoints (several engines or machines).
import type { EngineInfo } from '../../shared/types';
import type { EngineEndpoint } from './types';
import { normalizeBaseUrl } from './url';

/** One models.json entry (computing-provider format); other keys are ignored here. */
export interface ModelsJsonEntry {
  endpoint: string;
  local_model?: string;
  api_key?: string;
}

/**
 * model id -> endpoints. models.json entries come first (they carry local_model and api_key); a
 * reachable discovered engine adds each of its models under the engine's own name, unless a
 * models.json entry already maps a public id onto that same engine model. Unreachable engines add
 * nothing (models.json endpoints stay: their health decides). Bad endpoint URLs are skipped and
 * reported through `warn`.
 */
export function buildCatalog(
  engines: EngineInfo[],
  modelsJson: Record<string, ModelsJsonEntry>,
  warn?: (message: string) => void,
): Map<string, EngineEndpoint[]> {
  const catalog = new Map<string, EngineEndpoint[]>();
  const typeAt = new Map(engines.map((e) => [e.url, e.type]));
  const claimed = new Set<string>(); // `${url} ${engine model name}` covered by models.json
  const add = (id: string, ep: EngineEndpoint) => {
    const list = catalog.get(id) ?? [];
    if (!list.some((x) => x.url === ep.url)) list.push(ep);
    catalog.set(id, list);
  };

  for (const [id, entry] of Object.entries(modelsJson)) {
    let url: string;
    try {
      url = normalizeBaseUrl(entry.endpoint);
    } catch (e) {
      warn?.(`models.json: model "${id}" has an unusable endpoint "${entry.endpoint}": ${(e as Error).message}`);
      continue;
    }
    const ep: EngineEndpoint = { url };
    if (entry.local_model) ep.localModel = entry.local_model;
    if (entry.api_key) ep.apiKey = entry.api_key;
    const type = typeAt.get(url);
    if (type) ep.engineType = type;
    add(id, ep);
    claimed.add(`${url} ${entry.local_model ?? id}`);
  }

  for (const engine of engines) {
    if (!engine.reachable) continue;
    for (const model of engine.models) {
      if (claimed.has(`${engine.url} ${model}`)) continue;
      add(model, { url: engine.url, engineType: engine.type });
    }
  }
  return catalog;
}
