// The one way tests write a config.toml: typed against the loader's own schema (src/core/config/config.ts
// ConfigFile), so a misspelt key or a wrong type is a compile error here instead of a refused file at run
// time, and serialised with smol-toml, the library the loader parses it with. Tests that check how a
// malformed file is refused write their bytes by hand on purpose.
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'smol-toml';
import type { ConfigFile } from '../../src/core/config/config';

/** TOML text for `config`; sections without keys are left out. */
export function configToml(config: ConfigFile): string {
  const sections = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined && Object.keys(v as object).length > 0));
  return `${stringify(sections)}\n`;
}

/** Writes `<home>/config.toml` and returns its path. */
export function writeConfigToml(home: string, config: ConfigFile, options: { mode?: number } = {}): string {
  const file = path.join(home, 'config.toml');
  fs.writeFileSync(file, configToml(config), options.mode === undefined ? undefined : { mode: options.mode });
  return file;
}
