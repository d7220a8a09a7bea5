// models.json is watched: an edit applies live (the model map is rebuilt, the hub told), a bad edit is
// refused with the file, the line and what is wrong, and the map in use is kept.
import path from 'node:path';
import { ConfigError, readModelsJson, type ProviderConfig } from '../config/config';
import type { Logger } from '../base/log';
import { HOME_FILES, homePath } from '../config/home-layout';
import { watchSettled } from '../config/config-watch';

export interface ModelsJsonWatch {
  close(): void;
  /** Re-read now (what the watcher does after a change). true when the new map was taken. */
  reload(): boolean;
}

export function watchModelsJson(config: ProviderConfig, log: Logger, onChange: () => void): ModelsJsonWatch {
  const dir = path.dirname(config.file);
  const file = homePath(dir, 'models');
  let last = JSON.stringify(config.modelEntries);
  const reload = (): boolean => {
    let next: ProviderConfig['modelEntries'];
    try {
      next = readModelsJson(file);
    } catch (e) {
      const why = e instanceof ConfigError ? e.message : `${file}: ${(e as Error).message}`;
      log.error(`models.json change refused: ${why.replace(/\.+$/, '')}. The models in use are kept until the file is fixed.`);
      return false;
    }
    const text = JSON.stringify(next);
    if (text === last) return true;
    last = text;
    config.modelEntries = next;
    log.info(`models.json changed: ${Object.keys(next).length} model(s) now (${Object.keys(next).join(', ') || 'none'})`);
    onChange();
    return true;
  };
  const watch = watchSettled(dir, HOME_FILES.models, 'models.json', log, () => void reload());
  return { reload, close: watch.close };
}
