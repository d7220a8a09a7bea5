// `swan-provider init`: a commented config.toml and a models.json to start from, in the home folder
// (or --dir), filled with the engines found on this machine's default ports and at --host addresses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineDiscovery } from '../core/engine/discovery';
import type { EngineInfo } from '../shared/types';
import { configTemplate, type TemplateNetwork } from '../core/config/template';

export { configTemplate };

export function modelsFromEngines(engines: EngineInfo[]): Record<string, { endpoint: string }> {
  const out: Record<string, { endpoint: string }> = {};
  for (const e of engines) if (e.reachable) for (const m of e.models) out[m] ??= { endpoint: e.url };
  return out;
}

export interface InitOptions {
  home: string;
  dir?: string;
  network?: TemplateNetwork;
  host?: string[];
  force?: boolean;
  /** Addresses probed automatically (tests: none). */
  probeUrls?: string[];
}

export async function initCommand(o: InitOptions): Promise<number> {
  const dir = path.resolve(o.dir ?? o.home);
  const configFile = path.join(dir, 'config.toml');
  const modelsFile = path.join(dir, 'models.json');
  for (const f of [configFile, modelsFile]) {
    if (fs.existsSync(f) && !o.force) {
      process.stderr.write(`${f} already exists; not touching it (use --force to overwrite).\n`);
      return 1;
    }
  }
  fs.mkdirSync(dir, { recursive: true });
  const hosts = o.host ?? [];
  process.stdout.write('Looking for inference engines on this machine…\n');
  const engines = await new EngineDiscovery({ intervalMs: 0, hosts, ...(o.probeUrls ? { probeUrls: o.probeUrls } : {}) }).rescan();
  const models = modelsFromEngines(engines);
  const network = o.network ?? 'mainnet';
  fs.writeFileSync(configFile, configTemplate(os.hostname().replace(/[^\w.-]/g, '-').slice(0, 64) || 'my-provider', { network, engineHosts: hosts }));
  fs.writeFileSync(modelsFile, `${JSON.stringify(models, null, 2)}\n`);
  const found = engines.filter((e) => e.reachable);
  process.stdout.write(`Wrote ${configFile} (network: ${network})\nWrote ${modelsFile} with ${Object.keys(models).length} model(s)`);
  process.stdout.write(found.length ? ` from ${found.map((e) => `${e.type} at ${e.url}`).join(', ')}.\n` : ' (no engine found: start one, or add {"<model>": {"endpoint": "http://127.0.0.1:8000"}}).\n');
  for (const e of engines.filter((x) => !x.reachable)) process.stderr.write(`No engine answered at ${e.url}: ${e.error ?? 'not answering'}\n`);
  const runArgs = o.dir ? `--config "${configFile}"` : `--home "${dir}"`;
  process.stdout.write(`Next: put your provider key in ApiKey (or paste it in the console), then run:  swan-provider run ${runArgs} --console 127.0.0.1:7777\n`);
  return 0;
}
