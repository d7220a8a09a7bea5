// The desktop's home folder and its first run: the same home the headless `swan-provider` uses (so
// `swan-provider usage` or `doctor` see the desktop's data), and a config.toml written from the
// `swan-provider init` template when there is none — the onboarding then asks for the key.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultHome } from '../cli/home';
import { configTemplate } from '../core/config/template';
import type { Logger } from '../core/log';

/** SWAN_HOME, else the OS app-data folder the CLI also uses. */
export function desktopHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(defaultHome(env));
}

/** Returns the config path, creating a default config.toml (and an empty models.json) when absent. */
export function ensureConfig(home: string, log: Logger): string {
  const configPath = path.join(home, 'config.toml');
  if (fs.existsSync(configPath)) return configPath;
  fs.mkdirSync(home, { recursive: true });
  const name = os.hostname().replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 64) || 'my-provider';
  fs.writeFileSync(configPath, configTemplate(name), { flag: 'wx' });
  const modelsPath = path.join(home, 'models.json');
  if (!fs.existsSync(modelsPath)) fs.writeFileSync(modelsPath, '{}\n', { flag: 'wx' });
  log.info(`First run: wrote ${configPath}. Engines on this machine are found automatically; the provider key is asked for in the app.`);
  return configPath;
}
