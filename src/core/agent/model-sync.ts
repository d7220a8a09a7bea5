// Keeps the model set in step with its sources: config and models.json, the engines discovery found and
// the owner's toggles. A rebuild tells the scheduler (slots), the health monitor (what to probe), the
// context-window cache and, through `announce`, the hub and the console.
import type { EngineInfo } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { ContextLengths } from '../engine/context-length';
import type { EngineDiscovery } from '../engine/discovery';
import type { HealthMonitor } from '../engine/health';
import type { Log, Logger } from '../log';
import type { Scheduler } from '../scheduler/scheduler';
import type { ModelRegistry } from './models';
import { syncScheduler } from './scheduler-sync';
import type { SettingsFile } from './settings';

/** Engine URLs the owner named: config's EngineHosts, endpoints added in the console, and models.json's. */
export function engineHosts(config: ProviderConfig, settings: SettingsFile): string[] {
  // models.json endpoints too: the Engines card then shows the engine behind each model, with its type.
  const fromModels = Object.values(config.modelEntries).map((e) => e.endpoint);
  return [...config.agent.engineHosts, ...(settings.get().extraEndpoints ?? []).map((e) => e.url), ...fromModels];
}

export interface ModelSyncDeps {
  config: ProviderConfig;
  settings: SettingsFile;
  /** Engine API keys from models.json are redacted by value in logs. */
  log: Log;
  l: Logger;
  registry: ModelRegistry;
  scheduler: Scheduler;
  health: HealthMonitor;
  discovery: EngineDiscovery;
  contexts: ContextLengths;
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  autoDiscovery: boolean;
  /** The models the hub is told of (none while paused). */
  announced: () => string[];
  /** Re-registers when the announced set changed; the console hears of it either way. */
  announce: () => void;
}

export class ModelSync {
  private engines: EngineInfo[] = [];
  /** Settles when the context windows of the last refresh are known (start waits for it, bounded). */
  contextsReady: Promise<void> = Promise.resolve();

  constructor(private readonly d: ModelSyncDeps) {}

  engineList(): EngineInfo[] {
    return this.engines;
  }

  /** Discovery's latest view of the engines; the model set follows. */
  setEngines(engines: EngineInfo[]): void {
    this.engines = engines;
    this.rebuild();
  }

  /** Probes engines now (plus `extra` URLs the owner just added) and rebuilds the model set. */
  async rescan(extra: string[] = []): Promise<void> {
    if (!this.d.autoDiscovery) this.d.l.info('engine discovery is off ([Agent] Discovery = false): probing only the addresses you added and models.json');
    this.engines = await this.d.discovery.setHosts([...engineHosts(this.d.config, this.d.settings), ...extra]);
    this.rebuild();
  }

  /** Re-reads models (config + discovery + the owner's toggles) and tells the scheduler, health monitor and hub. */
  rebuild(): void {
    const { config, registry } = this.d;
    const s = this.d.settings.get();
    this.d.log.addSecrets(Object.values(config.modelEntries).map((e) => e.api_key));
    registry.rebuild({ entries: config.modelEntries, configModels: config.models, engines: this.engines, prefs: s.models ?? {} });
    syncScheduler(registry, this.d.scheduler, config.agent);
    this.d.health.setEndpoints(registry.healthTargets());
    this.refreshContexts();
    this.d.announce();
  }

  /** Re-reads the context windows of the announced models (overrides at once, engines probed). */
  refreshContexts(onlyMissing = false): void {
    this.contextsReady = this.d.contexts.refresh(
      this.d.announced().map((id) => {
        const m = this.d.registry.get(id);
        return { model: id, endpoints: m?.endpoints ?? [], ...(m?.entry?.context_length ? { override: m.entry.context_length } : {}) };
      }),
      onlyMissing,
    );
  }
}
