// models.json is watched: an edit applies live (the model map is rebuilt, the hub told), a bad edit is
// refused with the file, the line and what is wrong, and the map in use is kept.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, readModelsJson, type ProviderConfig } from '../config/config';
import type { Logger } from '../base/log';
import { HOME_FILES, homePath } from '../config/home-layout';

export interface ModelsJsonWatch {
  close(): void;
  /** Re-read now (what the watcher does after a change). true when the new map was taken. */
  reload(): boolean;
}

/** Editors save in bursts (truncate + write, or write + rename): wait for the file to settle. */
const SETTLE_MS = 150;

export function watchModelsJson(config: ProviderConfig, log: Logger, onChange: () => void): ModelsJsonWatch {
  const dir = path.dirname(config.file);
  const file = homePath(dir, 'models');
  let last = JSON.stringify(config.modelEntries);
  let timer: NodeJS.Timeout | undefined;
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
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
      if (name !== null && name !== HOME_FILES.models) return;
      clearTimeout(timer);
      timer = setTimeout(reload, SETTLE_MS);
      timer.unref();
    });
    watcher.on('error', (e) => log.warn(`models.json is no longer watched (${e.message}); restart to pick up edits`));
  } catch (e) {
    log.warn(`models.json cannot be watched (${(e as Error).message}); restart to pick up edits`);
  }
  return {
    reload,
    close: () => {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
