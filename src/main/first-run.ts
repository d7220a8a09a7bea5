// The desktop's home folder and its first run: the same home the headless `swan-provider` uses (so
// `swan-provider usage` or `doctor` see the desktop's data), and a config.toml written from the
// `swan-provider init` template when there is none — the onboarding then asks for the key.
import path from 'node:path';
import { defaultHome } from '../core/config/home';
import { ensureConfig } from '../core/config/first-run';

/** SWAN_HOME, else the OS app-data folder the CLI also uses. */
export function desktopHome(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(defaultHome(env));
}

export { ensureConfig };
