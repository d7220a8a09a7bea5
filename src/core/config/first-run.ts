// First run on a new machine: a config.toml from the `swan-provider init` template (and an empty
// models.json) in the home folder, so the agent can start and the console's onboarding asks for the key.
import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../base/log';
import { configTemplate } from './template';
import { homePath } from './home-layout';
import { DIR_MODE } from './home';

/** Returns `<home>/config.toml`, writing a default one (and an empty models.json) when absent. */
export function ensureConfig(home: string, log: Logger): string {
  const configPath = homePath(home, 'config');
  if (fs.existsSync(configPath)) return configPath;
  fs.mkdirSync(home, { recursive: true, mode: DIR_MODE });
  const name =
    os
      .hostname()
      .replace(/[^A-Za-z0-9_.-]/g, '-')
      .slice(0, 64) || 'my-provider';
  fs.writeFileSync(configPath, configTemplate(name), { flag: 'wx', mode: 0o600 });
  const modelsPath = homePath(home, 'models');
  if (!fs.existsSync(modelsPath)) fs.writeFileSync(modelsPath, '{}\n', { flag: 'wx', mode: 0o600 });
  log.info(`First run: wrote ${configPath}. Engines on this machine are found automatically; the provider key is asked for in the console.`);
  return configPath;
}
