// `swan-provider init`: a commented config.toml and a models.json to start from, filled with the
// engines found on this machine's default ports.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineDiscovery } from '../core/engine/discovery';
import type { EngineInfo } from '../shared/types';
import { configTemplate } from '../core/config/template';

export { configTemplate };

export function modelsFromEngines(engines: EngineInfo[]): Record<string, { endpoint: string }> {
  const out: Record<string, { endpoint: string }> = {};
  for (const e of engines) if (e.reachable) for (const m of e.models) out[m] ??= { endpoint: e.url };
  return out;
}

export async function initCommand(o: { dir: string; force?: boolean }): Promise<number> {
  const dir = path.resolve(o.dir);
  const configFile = path.join(dir, 'config.toml');
  const modelsFile = path.join(dir, 'models.json');
  for (const f of [configFile, modelsFile]) {
    if (fs.existsSync(f) && !o.force) {
      process.stderr.write(`${f} already exists; not touching it (use --force to overwrite).\n`);
      return 1;
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  process.stdout.write('Looking for inference engines on this machine…\n');
  const engines = await new EngineDiscovery({ intervalMs: 0 }).rescan();
  const models = modelsFromEngines(engines);
  fs.writeFileSync(configFile, configTemplate(os.hostname().replace(/[^\w.-]/g, '-').slice(0, 64) || 'my-provider'));
  fs.writeFileSync(modelsFile, `${JSON.stringify(models, null, 2)}\n`);
  const found = engines.filter((e) => e.reachable);
  process.stdout.write(`Wrote ${configFile}\nWrote ${modelsFile} with ${Object.keys(models).length} model(s)`);
  process.stdout.write(found.length ? ` from ${found.map((e) => `${e.type} at ${e.url}`).join(', ')}.\n` : ' (no engine found: start one, or add {"<model>": {"endpoint": "http://127.0.0.1:8000"}}).\n');
  process.stdout.write('Next: put your provider key in ApiKey, then run:  swan-provider run --config ' + configFile + '\n');
  return 0;
}
