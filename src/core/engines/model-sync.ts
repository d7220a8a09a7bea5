// Keeps the model set in step with its sources: config and models.json, the engines discovery found and
// the owner's toggles. A rebuild tells the scheduler (slots), the health monitor (what to probe), the
// context-window cache and, through `announce`, the hub and the console.
import type { EngineInfo } from '../../shared/types';
import type { ModelEntry, ProviderConfig } from '../config/config';
import type { ContextLengths } from '../engine-client/context-length';
import type { EngineDiscovery } from '../engine-client/discovery';
import type { HealthMonitor } from '../engine-client/health';
import type { AgentLog, Logger } from '../base/log';
import type { Scheduler } from '../scheduler/scheduler';
import type { ModelRegistry } from '../models/registry';
import { syncScheduler } from './scheduler-sync';
import type { SettingsFile } from '../config/settings-file';
import { endpointStates, engineView } from './endpoint-state';
import { endpointKey } from '../engine-client/url';
import { mappingChecks } from '../models/mapping-check';
import { contextTargets } from '../models/context-targets';

/** Engine URLs the owner named: config's EngineHosts, endpoints added in the console, and models.json's. */
export function engineHosts(config: ProviderConfig, settings: SettingsFile): string[] {
  // models.json endpoints too: the Engines card then shows the engine behind each model, with its type.
  const fromModels = Object.values(config.modelEntries).map((e) => e.endpoint);
  return [...config.agent.engineHosts, ...(settings.get().extraEndpoints ?? []).map((e) => e.url), ...fromModels];
}

export interface ModelSyncDeps {
  config: ProviderConfig;
  /** Models held off a paused GPU (engines/gpu-holds.ts): their deep check is not a chat (it would load them back). */
  held?: (id: string) => boolean;
  settings: SettingsFile;
  /** Engine API keys from models.json are redacted by value in logs. */
  log: AgentLog;
  l: Logger;
  registry: ModelRegistry;
  scheduler: Scheduler;
  health: HealthMonitor;
  discovery: EngineDiscovery;
  contexts: ContextLengths;
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  autoDiscovery: boolean;
  /** The engines this agent runs that have answered (catalogue id → endpoint), and where they all listen. */
  managed?: () => Record<string, ModelEntry>;
  managedHosts?: () => string[];
  /** The models the hub is told of (none while paused). */
  announced: () => string[];
  /** Re-registers when the announced set changed; the console hears of it either way. */
  announce: () => void;
}

export class ModelSync {
  /** Discovery's latest list, as it gave it. */
  private discovered: EngineInfo[] = [];
  /**
   * Engines that served a model the owner switched on, as last seen: kept (as not answering) after
   * discovery forgets a vanished engine, so its models stay in the table as down and are still probed.
   */
  private readonly remembered = new Map<string, EngineInfo>();
  /** Whether discovery has looked once: from then on, an endpoint it has not looked at yet is a new one. */
  private probedOnce = false;
  /** Settles when the context windows of the last refresh are known (start waits for it, bounded). */
  contextsReady: Promise<void> = Promise.resolve();

  constructor(private readonly d: ModelSyncDeps) {}

  /** Every engine as the console shows it: discovery's view, remembered engines, health's verdict on each. */
  engineList(): EngineInfo[] {
    return engineView(this.engines(), this.d.health.states());
  }

  /** Whether discovery's own last look found an engine answering at `url` (health may know better since). */
  discoverySees(url: string): boolean {
    const key = endpointKey(url);
    return this.discovered.some((e) => endpointKey(e.url) === key && e.reachable);
  }

  /** Discovery's latest view of the engines; the model set follows. */
  setEngines(engines: EngineInfo[]): void {
    this.discovered = engines;
    this.probedOnce = true;
    this.rebuild();
    void this.settleDisagreements();
  }

  /** Discovery's first scan has ended: from now on a mapping whose engine was not looked at yet waits for it. */
  markProbed(): void {
    this.probedOnce = true;
  }

  /** The owner removed an address: it is no longer kept as a vanished engine (its models leave with it). */
  forget(url: string): void {
    this.remembered.delete(endpointKey(url));
  }

  /** Probes engines now (plus `extra` URLs the owner just added) and rebuilds the model set. */
  async rescan(extra: string[] = []): Promise<void> {
    if (!this.d.autoDiscovery) this.d.l.info('engine discovery is off ([Agent] Discovery = false): probing only the addresses you added and models.json');
    this.probedOnce = true;
    this.discovered = await this.d.discovery.setHosts([...engineHosts(this.d.config, this.d.settings), ...(this.d.managedHosts?.() ?? []), ...extra]);
    this.rebuild();
    await this.settleDisagreements();
  }

  /**
   * Where discovery's look and health's last check disagree on whether an engine answers, health looks
   * again now: it is the one state of a watched endpoint, so it must be the newer look too.
   */
  private async settleDisagreements(): Promise<void> {
    const health = new Map(this.d.health.states().map((h) => [endpointKey(h.url), h]));
    const differ = this.engines().filter((e) => {
      const h = health.get(endpointKey(e.url));
      return h && (h.condition === 'down') === e.reachable;
    });
    await Promise.all(differ.map((e) => this.d.health.probeNow(e.url)));
  }

  /** Re-reads models (config + discovery + the owner's toggles) and tells the scheduler, health monitor and hub. */
  rebuild(): void {
    const { config, registry } = this.d;
    const s = this.d.settings.get();
    this.d.log.addSecrets(Object.values(config.modelEntries).map((e) => e.api_key));
    const engines = this.engines();
    registry.rebuild({ entries: config.modelEntries, configModels: config.models, engines, prefs: s.models ?? {}, managed: this.d.managed?.() ?? {} });
    this.checkMappings(engines);
    this.remember(engines);
    this.d.health.setEndpoints(registry.healthTargets((id) => this.d.held?.(id) ?? false));
    // The monitor's view (an endpoint it starts watching again starts from its first check, not from a
    // state held from before it left) and discovery's for the endpoints it does not watch.
    const urls = [...new Set(registry.all().flatMap((m) => m.endpoints.map((e) => e.url)))];
    registry.syncHealth(endpointStates(urls, this.d.health.states(), engines));
    syncScheduler(registry, this.d.scheduler, config.agent);
    this.refreshContexts();
    this.d.announce();
  }

  /** The scheduler told each model's endpoints and health again (a model's own deep check changed). */
  syncScheduler(): void {
    syncScheduler(this.d.registry, this.d.scheduler, this.d.config.agent);
  }

  /** Every mapping checked against the engines' reports; a contradiction newly found is said in the log once. */
  private checkMappings(engines: EngineInfo[]): void {
    const prefs = this.d.settings.get().models ?? {};
    // A mapping added while the agent runs (models.json edited, an engine started for the owner) waits for its
    // engine's first report before it is announced, so it is never announced before it is checked.
    const checks = mappingChecks(this.d.registry, engines, (id) => prefs[id]?.confirmedMapping, this.probedOnce);
    for (const [id, f] of checks) {
      if (this.d.registry.mappingOf(id)?.signature === f.signature || f.code === 'mapping_unchecked') continue;
      if (f.confirmed) this.d.l.info(`${id}: ${f.text} Announced anyway: you confirmed it.`);
      else
        this.d.l.warn(
          `${id} is not announced [${f.code}]: ${f.text} The network checks served weights; confirm it under Engines & models only if this is really ${id}.`,
        );
    }
    this.d.registry.setMappingChecks(checks);
  }

  /**
   * Discovery's engines, then those it forgot that served a switched-on model, then the addresses the
   * owner added naming a model that have not answered yet (after a restart with the engine down): each
   * model keeps a row, shown as down, instead of vanishing.
   */
  private engines(): EngineInfo[] {
    const list = [...this.discovered];
    const listed = new Set(list.map((e) => endpointKey(e.url)));
    for (const [url, e] of this.remembered) {
      if (listed.has(url)) continue;
      list.push({ ...e, reachable: false, error: e.error ?? `the engine at ${e.url} stopped answering` });
      listed.add(url);
    }
    for (const added of this.d.settings.get().extraEndpoints ?? []) {
      if (!added.model) continue;
      const url = endpointKey(added.url);
      const i = list.findIndex((e) => endpointKey(e.url) === url);
      const at = list[i];
      if (at && (at.reachable || at.models.length > 0)) continue;
      const placeholder: EngineInfo = {
        url,
        type: 'unknown',
        models: [added.model],
        reachable: false,
        origin: 'owner',
        error: at?.error ?? `nothing answers at ${url} yet`,
      };
      if (at) list[i] = { ...at, models: [added.model], error: placeholder.error };
      else list.push(placeholder);
    }
    return list;
  }

  /** Keeps the last sight of each answering engine that serves a switched-on model; forgets the rest. */
  private remember(engines: EngineInfo[]): void {
    const served = new Set(
      this.d.registry
        .all()
        .filter((m) => m.enabled)
        .flatMap((m) => m.endpoints.map((e) => e.url)),
    );
    for (const e of engines) {
      const url = endpointKey(e.url);
      if (!served.has(url)) this.remembered.delete(url);
      else if (e.reachable && e.models.length > 0) this.remembered.set(url, { ...e, models: [...e.models] });
    }
  }

  /** Re-reads the context windows of the announced models (overrides at once, engines probed). */
  refreshContexts(onlyMissing = false): void {
    // The same targets `doctor` checks (models/context-targets.ts).
    this.contextsReady = this.d.contexts.refresh(contextTargets(this.d.registry, this.d.announced()), onlyMissing);
  }
}
