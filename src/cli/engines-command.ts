// `swan-provider engines [--json] [--host HOST:PORT…]`: what discovery finds — each engine's URL, type,
// version and models — on the default ports, at the home's EngineHosts / console-added endpoints, and
// at --host. Exit code 0 when the scan ran (nothing found included: `[]` with a hint on stderr).
import fs from 'node:fs';
import type { EngineInfo } from '../shared/types';
import { SettingsFile } from '../core/config/settings-file';
import { loadConfig } from '../core/config/config';
import { defaultProbeUrls } from '../core/engine-client/detect';
import { EngineDiscovery } from '../core/engine-client/discovery';
import { terminalWriter } from '../core/base/terminal';
import { homePath } from '../core/config/home-layout';
import { announcedName } from '../core/models/registry';

export interface EnginesCommandOptions {
  json: boolean;
  /** Extra base URLs to probe (owner-added hosts). */
  hosts: string[];
  /** Addresses probed automatically (default: 127.0.0.1 on the default ports). */
  probeUrls?: string[];
  timeoutMs?: number;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
}

/** The engine addresses the agent of this home is told about: config EngineHosts and console-added endpoints. */
export function homeEngineHosts(home: string): string[] {
  const out: string[] = [];
  const config = homePath(home, 'config');
  if (fs.existsSync(config)) {
    try {
      out.push(...loadConfig(config).agent.engineHosts);
    } catch {
      // doctor and run report a bad config; engines still scans the default ports.
    }
  }
  out.push(...(SettingsFile.in(home).get().extraEndpoints ?? []).map((e) => e.url));
  return out;
}

/**
 * Each model as it would be announced, with its file beside it: a file path is never a model's name (llama-server
 * without --alias reports its -m path).
 */
function served(models: string[]): Array<{ name: string; file?: string }> {
  return models.map((m) => (announcedName(m) === m ? { name: m } : { name: announcedName(m), file: m }));
}

function table(engines: EngineInfo[]): string {
  const rows = engines.map((e) => [
    e.url,
    e.reachable ? e.type : 'not usable',
    e.version ?? '-',
    e.reachable
      ? served(e.models)
          .map((s) => (s.file ? `${s.name} (file ${s.file})` : s.name))
          .join(', ') || '(no models loaded)'
      : (e.error ?? 'not answering'),
  ]);
  const head = ['URL', 'TYPE', 'VERSION', 'MODELS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

export async function enginesCommand(opts: EnginesCommandOptions): Promise<number> {
  // Engine versions and model ids come from the engines: printed through forTerminal.
  const out = terminalWriter(opts.stdout ?? process.stdout);
  const err = terminalWriter(opts.stderr ?? process.stderr);
  const probeUrls = opts.probeUrls ?? defaultProbeUrls();
  const discovery = new EngineDiscovery({ hosts: opts.hosts, probeUrls, intervalMs: 0, timeoutMs: opts.timeoutMs ?? 800 });
  const engines = await discovery.rescan();
  const found = engines.some((e) => e.reachable);
  // `models` stays the engine's own names (scripts read it); `served` is what each is announced as, and its file.
  if (opts.json)
    out.write(
      `${JSON.stringify(
        engines.map((e) => ({ ...e, served: served(e.models) })),
        null,
        2,
      )}\n`,
    );
  else if (engines.length) out.write(`${table(engines)}\n`);
  if (!found) {
    const where = probeUrls.map((u) => new URL(u).port).join(', ');
    // The hint goes to stderr so that `--json` output stays parseable.
    err.write(
      `No inference engine found on 127.0.0.1 (ports ${where})${opts.hosts.length ? ' or at the addresses given' : ''}.\n` +
        'Start one (for example `ollama serve` or `vllm serve <model>`), or give its address with --host HOST:PORT.\n',
    );
  }
  return 0;
}
