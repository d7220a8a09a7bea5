// `swan-provider engines [--json] [--host URL…]`: what discovery finds — each engine's URL, type,
// version and models. Exit code 0 when at least one engine answers, 1 when none does.
import type { EngineInfo } from '../shared/types';
import { defaultProbeUrls } from '../core/engine/detect';
import { EngineDiscovery } from '../core/engine/discovery';
import { terminalWriter } from '../core/terminal';

export interface EnginesCommandOptions {
  json: boolean;
  /** Extra base URLs to probe (owner-added hosts). */
  hosts: string[];
  /** Addresses probed automatically (default: 127.0.0.1 on the default ports). */
  probeUrls?: string[];
  timeoutMs?: number;
  stdout?: NodeJS.WritableStream;
}

function table(engines: EngineInfo[]): string {
  const rows = engines.map((e) => [
    e.url,
    e.reachable ? e.type : 'not usable',
    e.version ?? '-',
    e.reachable ? e.models.join(', ') || '(no models loaded)' : (e.error ?? 'not answering'),
  ]);
  const head = ['URL', 'TYPE', 'VERSION', 'MODELS'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(head), ...rows.map(line)].join('\n');
}

export async function enginesCommand(opts: EnginesCommandOptions): Promise<number> {
  // Engine versions and model ids come from the engines: printed through forTerminal.
  const out = terminalWriter(opts.stdout ?? process.stdout);
  const probeUrls = opts.probeUrls ?? defaultProbeUrls();
  const discovery = new EngineDiscovery({ hosts: opts.hosts, probeUrls, intervalMs: 0, timeoutMs: opts.timeoutMs ?? 800 });
  const engines = await discovery.rescan();
  const found = engines.some((e) => e.reachable);
  if (opts.json) {
    out.write(`${JSON.stringify(engines, null, 2)}\n`);
    return found ? 0 : 1;
  }
  if (engines.length) out.write(`${table(engines)}\n`);
  if (!found) {
    const where = probeUrls.map((u) => new URL(u).port).join(', ');
    out.write(
      `No inference engine found on 127.0.0.1 (ports ${where})${opts.hosts.length ? ' or at the addresses given' : ''}.\n` +
        'Start one (for example `ollama serve` or `vllm serve <model>`), or give its address with --host http://HOST:PORT.\n',
    );
  }
  return found ? 0 : 1;
}
