// `swan-provider init`: a commented config.toml and a models.json to start from, in the home folder
// (or --dir), filled with the engines found on this machine's default ports and at --host addresses.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EngineDiscovery } from '../core/engine-client/discovery';
import type { EngineInfo } from '../shared/types';
import { configTemplate, networkAddresses, type TemplateNetwork } from '../core/config/template';
import { homePath } from '../core/config/home-layout';
import { announcedName } from '../core/models/registry';
import { Catalogue, matchModel, type CatalogueModel } from '../core/platform/catalogue';
import { memoryLog } from '../core/base/log';
import { forTerminal } from '../core/base/terminal';
import { DIR_MODE, ensureHome } from '../core/config/home';
import { writeFileAtomic } from '../core/config/atomic-file';
import { isRefusedUrl, REFUSED_ADDRESS_TEXT } from '../core/http/address-class';

export { configTemplate };

export interface ModelsJsonLine {
  endpoint: string;
  local_model?: string;
}

/**
 * models.json from the engines found, named as the console names them: the network's catalogue id when
 * the engine's model certainly is one (the exact id, an alias, the same normalised name, and nothing the
 * engine reports against it), else the engine's own name — a file path by its stem — with the engine's
 * name kept in local_model. A file path never becomes a name the hub sees. Returns what it did, per model.
 */
export function modelsFromEngines(engines: EngineInfo[], catalogue: CatalogueModel[] = []): { models: Record<string, ModelsJsonLine>; notes: string[] } {
  const models: Record<string, ModelsJsonLine> = {};
  const notes: string[] = [];
  for (const e of engines) {
    if (!e.reachable) continue;
    for (const m of e.models) {
      const match = matchModel(m, catalogue, e.modelMeta?.[m]);
      const sure = match && match.basis !== 'metadata' ? match.id : undefined;
      const key = sure ?? announcedName(m);
      if (models[key]) continue;
      models[key] = { endpoint: e.url, ...(key !== m ? { local_model: m } : {}) };
      if (sure && sure !== m) notes.push(`${m} → ${sure} (the network's catalogue id)`);
      else if (!sure && catalogue.length) {
        notes.push(
          `${key}${key !== m ? ` (${m})` : ''}: not in the network's catalogue${match ? `; it may be ${match.id} (same family and size): rename its key if it is` : ', so the network will not route it'}`,
        );
      }
    }
  }
  return { models, notes };
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
  const configFile = homePath(dir, 'config');
  const modelsFile = homePath(dir, 'models');
  for (const f of [configFile, modelsFile]) {
    if (fs.existsSync(f) && !o.force) {
      process.stderr.write(`${f} already exists; not touching it (use --force to overwrite).\n`);
      return 1;
    }
  }
  // The home as `run` makes it (0700, what is in it tightened); a --dir of the owner's choosing is made 0700 when new.
  if (o.dir) fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  else ensureHome(dir);
  // The console's address policy: a link-local or metadata address is neither probed nor written to EngineHosts.
  const hosts: string[] = [];
  for (const h of o.host ?? []) {
    if (await isRefusedUrl(h)) process.stderr.write(`Not using --host ${forTerminal(h)}: ${REFUSED_ADDRESS_TEXT}.\n`);
    else hosts.push(h);
  }
  process.stdout.write('Looking for inference engines on this machine…\n');
  const engines = await new EngineDiscovery({ intervalMs: 0, hosts, ...(o.probeUrls ? { probeUrls: o.probeUrls } : {}) }).rescan();
  const network = o.network ?? 'mainnet';
  // The network's catalogue names the models (as the Go setup does); read only when there is something to name.
  let catalogue: CatalogueModel[] = [];
  if (engines.some((e) => e.reachable && e.models.length)) {
    const c = new Catalogue({ serviceUrl: () => networkAddresses(network).serviceUrl, log: memoryLog().child('catalogue'), timeoutMs: 3000 });
    await c.refresh();
    catalogue = c.models;
    if (!catalogue.length) process.stderr.write(`The network's model catalogue could not be read (${c.url()}): models are named as the engines name them.\n`);
  }
  const { models, notes } = modelsFromEngines(engines, catalogue);
  // 0600: the README then has the owner put the provider key in config.toml.
  writeFileAtomic(
    configFile,
    configTemplate(
      os
        .hostname()
        .replace(/[^\w.-]/g, '-')
        .slice(0, 64) || 'my-provider',
      { network, engineHosts: hosts },
    ),
  );
  writeFileAtomic(modelsFile, `${JSON.stringify(models, null, 2)}\n`);
  const found = engines.filter((e) => e.reachable);
  process.stdout.write(`Wrote ${configFile} (network: ${network})\nWrote ${modelsFile} with ${Object.keys(models).length} model(s)`);
  process.stdout.write(
    found.length
      ? ` from ${found.map((e) => `${e.type} at ${e.url}`).join(', ')}.\n`
      : ' (no engine found: start one, or add {"<model>": {"endpoint": "http://127.0.0.1:8000"}}).\n',
  );
  for (const n of notes) process.stdout.write(forTerminal(`  ${n}\n`));
  for (const e of engines.filter((x) => !x.reachable)) process.stderr.write(`No engine answered at ${e.url}: ${e.error ?? 'not answering'}\n`);
  const runArgs = o.dir ? `--config "${configFile}"` : `--home "${dir}"`;
  process.stdout.write(
    `Next: put your provider key in ApiKey (or paste it in the console), then run:  swan-provider run ${runArgs} --console 127.0.0.1:7777\n`,
  );
  return 0;
}
