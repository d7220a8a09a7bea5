// "Serve this" for a model an engine here has under its own name (an Ollama tag such as
// "qwen2.5:7b"): the hub routes only the network's ids, so the model is written to models.json under
// the network id with the tag as its local_model — the Go provider's own mapping format, which the
// registry already announces under the key and forwards to the engine under local_model, and which
// survives restarts. The owner's other entries are kept as they are; an entry the owner wrote for the
// same id is never overwritten.
import fs from 'node:fs';
import path from 'node:path';
import { readModelsJson, type ProviderConfig } from '../config/config';
import { homePath } from '../config/home-layout';
import { writeJsonAtomic } from '../config/atomic-file';
import { endpointKey } from '../engine-client/url';
import { DemandError } from '../platform/demand';

export type MapResult = 'added' | 'unchanged';

export function mapNetworkModel(file: string, networkId: string, engineUrl: string, localModel: string): MapResult {
  const entries = fs.existsSync(file) ? readModelsJson(file) : {};
  const cur = entries[networkId];
  if (cur) {
    if (endpointKey(cur.endpoint) === endpointKey(engineUrl) && (cur.local_model ?? networkId) === localModel) return 'unchanged';
    throw new DemandError(
      'already_mapped',
      `models.json already has an entry for ${networkId} (endpoint ${cur.endpoint}${cur.local_model ? `, local_model ${cur.local_model}` : ''}); edit or remove it there to serve ${localModel} from ${engineUrl} instead.`,
    );
  }
  writeJsonAtomic(file, { ...entries, [networkId]: { endpoint: engineUrl, local_model: localModel } });
  return 'added';
}

/** The models.json beside a config.toml (where the registry and the watcher read it). */
export function modelsJsonOf(config: Pick<ProviderConfig, 'file'>): string {
  return homePath(path.dirname(config.file), 'models');
}
