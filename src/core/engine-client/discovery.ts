// Engine discovery: probes 127.0.0.1 on the default ports plus the hosts the owner added, in parallel
// with short timeouts, never blocking start-up; re-runs on a timer and on rescan(). Emits 'change'
// (EngineInfo[]) when the set of engines or their models change. An engine that vanishes is kept with
// reachable:false for a while (so the UI and the catalogue do not flicker), then dropped.
import { EventEmitter } from 'node:events';
import type { EngineInfo } from '../../shared/types';
import type { Logger } from '../base/log';
import { isRefusedUrl, REFUSED_ADDRESS_TEXT, type Resolver } from '../http/address-class';
import { defaultProbeUrls, detectEngine } from './detect';
import { normalizeBaseUrl } from './url';

/**
 * How long a probe waits for an engine that answered before, or one the owner named (a first probe of a
 * default port waits `timeoutMs`: most of those have nothing behind them and the scan should not wait).
 */
export const KNOWN_ENGINE_TIMEOUT_MS = 5000;
export { buildCatalog, type ModelsJsonEntry } from './catalog';

export interface DiscoveryOptions {
  /** Owner-added engine base URLs (any host). */
  hosts?: string[];
  /** Base URLs probed automatically (default: 127.0.0.1 on every default port). Tests inject port-0 servers. */
  probeUrls?: string[];
  /** Per-probe timeout (default 800 ms). */
  timeoutMs?: number;
  /** Re-scan period (default 30 s); 0 disables the timer. */
  intervalMs?: number;
  /** How long a vanished engine is kept with reachable:false (default 5 min). */
  keepMissingMs?: number;
  /** While an engine is loading its model, scan again this soon (default 1 s, doubling up to intervalMs). */
  loadingRetryMs?: number;
  /** The engine key models.json gives an address, sent with every probe of it. */
  keyFor?: (url: string) => string | undefined;
  log?: Logger;
  /** Name resolution for the address check of owner-added hosts (tests); the system's by default. */
  resolve?: Resolver;
}

function signature(list: EngineInfo[]): string {
  return JSON.stringify(list.map((e) => [e.url, e.type, e.version, [...e.models].sort(), e.reachable, e.error, e.loading]));
}

export class EngineDiscovery extends EventEmitter {
  private known = new Map<string, EngineInfo>();
  private hosts: string[];
  private readonly probeUrls: string[];
  private timer?: NodeJS.Timeout;
  private scan?: Promise<EngineInfo[]>;
  private next?: Promise<EngineInfo[]>;
  private lastSignature = '[]';
  private loadingTimer?: NodeJS.Timeout;
  private loadingWait = 0;

  constructor(private readonly opts: DiscoveryOptions = {}) {
    super();
    this.hosts = this.clean(opts.hosts ?? []);
    this.probeUrls = this.clean(opts.probeUrls ?? defaultProbeUrls());
  }

  /** The engines found so far (reachable first, then by URL). */
  engines(): EngineInfo[] {
    return [...this.known.values()]
      .sort((a, b) => Number(b.reachable) - Number(a.reachable) || a.url.localeCompare(b.url))
      .map((e) => ({ ...e, models: [...e.models] }));
  }

  /** Settles when the first scan after start() has ended. */
  firstScan: Promise<unknown> = new Promise(() => {});

  /** Start scanning in the background: returns at once. */
  start(): void {
    if (this.timer) return;
    this.firstScan = this.rescan();
    const every = this.opts.intervalMs ?? 30_000;
    if (every > 0) {
      this.timer = setInterval(() => void this.rescan(), every);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    clearTimeout(this.loadingTimer);
    this.loadingTimer = undefined;
  }

  /** Replace the owner-added hosts and scan again. */
  setHosts(hosts: string[]): Promise<EngineInfo[]> {
    this.hosts = this.clean(hosts);
    for (const [url, e] of this.known) if (e.origin === 'owner' && !this.hosts.includes(url)) this.known.delete(url);
    return this.rescan();
  }

  /**
   * Scan now. A call during a scan gets the scan after it (one, however many calls), so an address
   * added meanwhile is in the answer, never just in a later one.
   */
  rescan(): Promise<EngineInfo[]> {
    if (this.scan) {
      this.next ??= this.scan.then(() => {
        this.next = undefined;
        return this.rescan();
      });
      return this.next;
    }
    this.scan = this.runScan().finally(() => {
      this.scan = undefined;
    });
    return this.scan;
  }

  private clean(urls: string[]): string[] {
    const out = new Set<string>();
    for (const u of urls) {
      try {
        out.add(normalizeBaseUrl(u));
      } catch (e) {
        this.opts.log?.warn(`discovery: ignoring engine address "${u}": ${(e as Error).message}`);
      }
    }
    return [...out];
  }

  private async runScan(): Promise<EngineInfo[]> {
    const timeout = this.opts.timeoutMs ?? 800;
    const owner = new Set(this.hosts);
    const targets = [...new Set([...this.hosts, ...this.probeUrls])];
    // An owner-given address (config EngineHosts, models.json, --host) is classed as the console classes an
    // added endpoint, its name resolved first: link-local and metadata addresses are never probed.
    const results = await Promise.all(
      targets.map(async (url) => {
        if (owner.has(url) && (await isRefusedUrl(url, this.opts.resolve))) return { url, error: REFUSED_ADDRESS_TEXT } as const;
        // An engine that answered before, or one the owner named, is given longer: a busy machine (or a busy
        // engine) can take more than a blink to list its models, and calling it gone (or of no known type)
        // would withdraw its models from the hub. One that is gone refuses the connection at once, whatever the timeout.
        const wait = owner.has(url) || this.known.get(url)?.reachable ? Math.max(timeout, KNOWN_ENGINE_TIMEOUT_MS) : timeout;
        return detectEngine(url, wait, owner.has(url) ? 'owner' : 'probe', this.opts.keyFor?.(url)).catch((e: Error) => ({ url, error: e.message }) as const);
      }),
    );
    const now = Date.now();
    const seen = new Set<string>();
    for (let i = 0; i < targets.length; i++) {
      const url = targets[i] as string;
      const r = results[i];
      if (r && 'type' in r && (r.reachable || r.loading)) {
        seen.add(url);
        this.known.set(url, r);
      } else if (owner.has(url)) {
        // The owner asked for this address: show why it is not usable.
        const prev = this.known.get(url);
        const error = r && 'error' in r && r.error ? r.error : `nothing is listening at ${url}`;
        if (prev?.reachable) this.markMissing(prev, error);
        else this.known.set(url, { ...(prev ?? { url, type: 'unknown', models: [] }), url, reachable: false, origin: 'owner', error });
        seen.add(url);
      }
    }
    const keep = this.opts.keepMissingMs ?? 5 * 60_000;
    for (const [url, e] of this.known) {
      if (seen.has(url)) continue;
      if (e.reachable) this.markMissing(e, `the engine at ${url} stopped answering`);
      if (now - (e.lastSeen ?? 0) >= keep) this.known.delete(url);
    }
    const list = this.engines();
    this.watchLoading(list);
    const sig = signature(list);
    if (sig !== this.lastSignature) {
      this.lastSignature = sig;
      this.opts.log?.info(
        `engines: ${
          list
            .filter((e) => e.reachable)
            .map((e) => `${e.type} at ${e.url}`)
            .join(', ') || 'none found'
        }`,
      );
      this.emit('change', list);
    }
    return list;
  }

  /**
   * An engine loading its model, or one the owner named that does not answer (started after the agent, or
   * slow to answer on a busy machine), is looked at again soon — 1 s, then twice as long each time up to the
   * scan interval — so it is used as soon as it is ready rather than at the next scan.
   */
  private watchLoading(list: EngineInfo[]): void {
    if (!list.some((e) => e.loading || (e.origin === 'owner' && !e.reachable)) || !this.timer) {
      this.loadingWait = 0;
      return;
    }
    if (this.loadingTimer) return;
    const every = this.opts.intervalMs ?? 30_000;
    this.loadingWait = Math.min(every, this.loadingWait ? this.loadingWait * 2 : (this.opts.loadingRetryMs ?? 1000));
    this.loadingTimer = setTimeout(() => {
      this.loadingTimer = undefined;
      void this.rescan();
    }, this.loadingWait);
    this.loadingTimer.unref();
  }

  private markMissing(e: EngineInfo, error: string): void {
    e.reachable = false;
    e.error = error;
  }
}
