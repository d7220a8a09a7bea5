// The engines feature: what this machine can serve, and how well. It builds the model registry and what
// keeps it in step (config, models.json, discovery, the owner's toggles), engine health and capacity, the
// scheduler and pause controller that admit every engine call, the engine-call service itself, warmup,
// and the GPUs (detection, the sampler, the minute history). The features above read these parts; what
// they must hear of goes up through the two ports the root wires: `announce` (the served set may have
// changed) and `changed` (something the console shows changed).
import type { GpuInventory, GpuSample, ModelHealth } from '../../shared/types';
import type { Lifecycle } from '../base/lifecycle';
import { readModelsJson, type ProviderConfig } from '../config/config';
import { homePath } from '../config/home-layout';
import { ContextLengths } from '../engine-client/context-length';
import { EngineDiscovery } from '../engine-client/discovery';
import { HealthMonitor } from '../engine-client/health';
import { endpointKey } from '../engine-client/url';
import { detectGpus } from '../gpu/detect';
import { MinuteHistory } from '../gpu/minute-history';
import { GpuSampler } from '../gpu/sampler';
import { DEEP_CHECK_TIMEOUT_MS, healthProbe } from '../inference/health-probe';
import { InferenceRunner } from '../inference/runner';
import type { AgentLog, Logger } from '../base/log';
import { RequestBook } from '../inference/requests';
import { PauseController } from '../scheduler/pause';
import { bindPause } from '../scheduler/pause-binding';
import { Scheduler } from '../scheduler/scheduler';
import { engineHosts, ModelSync } from './model-sync';
import { ModelRegistry } from '../models/registry';
import { watchModelsJson, type ModelsJsonWatch } from '../models/watch';
import { watchConfigToml, type ConfigTomlWatch } from '../config/config-watch';
import { modelsJsonOf } from '../models/network-map';
import type { SettingsFile } from '../config/settings-file';
import { Warmup } from './warmup';
import { SelfHeal } from './self-heal';
import { wireEngines } from './wiring';
import { ManagedEngines } from '../managed/supervisor';
import { DockerEngines, dockerAddress } from '../managed/docker-engines';
import { ModelDownloads } from '../downloads/jobs';
import { modelsDirOf } from '../downloads/models-dir';
import { GpuHolds } from './gpu-holds';

/** How long the first register waits for the GPUs and context windows before going without them. */
const FIRST_REGISTER_WAIT_MS = 3000;

export interface EnginesDeps {
  config: ProviderConfig;
  settings: SettingsFile;
  home: string;
  env: NodeJS.ProcessEnv;
  log: AgentLog;
  life: Lifecycle;
  /** Whether the default engine ports are probed (AgentOptions.discovery, else [Agent] Discovery). */
  discovery?: boolean;
  /** GPU sampling and its minute history (AgentOptions.gpu). */
  gpu: boolean;
  /** The served set may have changed: the hub and the console hear of it. */
  announce: () => void;
  /** The models' health changed: the hub hears it at once (unless paused). */
  modelHealth: () => void;
  /** Something the console shows changed. */
  changed: () => void;
}

export class Engines {
  readonly registry = new ModelRegistry();
  /** Live and recent requests: every engine call is booked here; the features above read its events. */
  readonly book = new RequestBook();
  /** Each announced model's context window (models.json override, else what the engine reports). */
  readonly contexts = new ContextLengths();
  readonly scheduler: Scheduler;
  readonly pause: PauseController;
  readonly health: HealthMonitor;
  readonly discovery: EngineDiscovery;
  readonly models: ModelSync;
  /** The one engine-call service. */
  readonly runner: InferenceRunner;
  readonly warmup: Warmup;
  /** Models withdrawn from the hub after failing real probes or requests, until a probe passes (self-heal.ts). */
  readonly selfHeal: SelfHeal;
  readonly sampler?: GpuSampler;
  /** GPU metrics per minute for the last 7 days (<home>/gpu-history.jsonl). */
  readonly gpuHistory?: MinuteHistory;
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  readonly autoDiscovery: boolean;
  /** The engines this agent runs for the owner (`models serve`, the console's Serve). */
  readonly managed: ManagedEngines;
  /** The models the console downloads into the models folder (then served by `managed`). */
  readonly downloads: ModelDownloads;
  /** Per-GPU serving on a rig with several GPUs: each model's GPUs, and the models held while one is paused. */
  readonly gpuHolds: GpuHolds;
  private managedEntries = '{}';
  private inventory: GpuInventory = { gpus: [], detectedAt: 0, note: 'GPU detection has not run yet' };
  private modelsWatch?: ModelsJsonWatch;
  private configWatch?: ConfigTomlWatch;
  private readonly l: Logger;

  constructor(private readonly d: EnginesDeps) {
    const { config, log } = d;
    const a = config.agent;
    this.l = log.child('agent');
    this.scheduler = new Scheduler(
      { maxConcurrentPerEndpoint: a.maxConcurrentPerEndpoint, maxQueuePerModel: a.maxQueuePerModel, queueTimeoutMs: a.queueTimeoutMs },
      log.child('scheduler'),
    );
    this.pause = new PauseController({
      engineInFlight: () => this.scheduler.inFlight(),
      log: log.child('pause'),
      // gpuHolds is built below; the schedule is first read at start, once both exist.
      gpuSchedule: { perGpu: () => this.gpuHolds.pauses.perGpu, apply: (byGpu) => this.gpuHolds.pauses.setScheduled(byGpu) },
    });
    bindPause(this.pause, this.scheduler);
    this.health = new HealthMonitor({
      intervalMs: a.healthCheckIntervalMs,
      log: log.child('health'),
      deepEvery: a.deepHealthCheckEvery,
      // The deep check's one-token chat goes through the engine-call service (built below; probes start with start()).
      // Bounded by the headers deadline too (Go's 30 s at most): a frozen engine is found as fast as a request finds it.
      probe: healthProbe({ run: (req, sink) => this.runner.run(req, sink) }, Math.min(DEEP_CHECK_TIMEOUT_MS, a.engineHeadersTimeoutMs)),
    });
    // With discovery off, only the addresses the owner named are probed (none of the default ports).
    this.autoDiscovery = d.discovery ?? a.discovery;
    this.discovery = new EngineDiscovery({
      hosts: engineHosts(config, d.settings),
      ...(this.autoDiscovery ? {} : { probeUrls: [] }),
      // An engine models.json gives a key is probed with it, as every other call to it is.
      keyFor: (url) => Object.values(config.modelEntries).find((m) => m.api_key && endpointKey(m.endpoint) === url)?.api_key,
      log: log.child('discovery'),
    });
    this.selfHeal = new SelfHeal({
      failures: a.selfHealFailures,
      errorRate: 0.5,
      minRequests: 10,
      windowMs: 10 * 60_000,
      holdMs: a.selfHealHoldMs,
      health: (model) => this.registry.healthOf(model),
      log: log.child('health'),
    });
    this.managed = new ManagedEngines({
      home: d.home,
      env: d.env,
      log: log.child('managed'),
      ...(a.llamaServer ? { llamaServer: a.llamaServer } : {}),
      secrets: (v) => log.addSecrets(v),
      changed: () => this.managedChanged(),
      containers: new DockerEngines(dockerAddress(d.env)),
    });
    this.downloads = new ModelDownloads({ modelsDir: modelsDirOf(d.home, d.env), log: log.child('downloads'), changed: d.changed });
    this.models = new ModelSync({
      config,
      settings: d.settings,
      log,
      l: this.l,
      registry: this.registry,
      scheduler: this.scheduler,
      health: this.health,
      discovery: this.discovery,
      contexts: this.contexts,
      autoDiscovery: this.autoDiscovery,
      managed: () => this.managed.entries(),
      managedHosts: () => this.managed.urls(),
      held: (id) => this.gpuHolds.isHeld(id),
      announced: () => this.announced(),
      announce: () => {
        // A model switched off or gone leaves self-healing's books (back later, it starts afresh).
        this.selfHeal.retain(this.registry.announced());
        this.gpuHolds.apply();
        d.announce();
      },
    });
    this.gpuHolds = new GpuHolds({
      registry: this.registry,
      scheduler: this.scheduler,
      managed: this.managed,
      entries: () => config.modelEntries,
      givenBack: () => d.settings.get().gpusGivenBack ?? [],
      saveGivenBack: (gpus) => d.settings.update((s) => ({ ...s, gpusGivenBack: gpus })),
      freeMemory: a.pauseFreesGpu,
      unloadOllama: (models) => this.unloadOllamaModels(models),
      // The health checks learn which models are held (no chat for them), and the hub and console hear of it.
      announce: () => {
        this.models.rebuild();
        d.announce();
      },
      changed: d.changed,
      // A GPU's utilisation is someone else's only while none of our requests runs (which GPU a request runs on is
      // not known for every engine, so any of ours counts, as on a rig with one GPU).
      inFlightOn: () => this.scheduler.inFlight(),
      log: log.child('pause'),
    });
    if (d.gpu) {
      this.sampler = new GpuSampler({ intervalMs: a.gpuSampleIntervalMs, env: d.env, log: log.child('gpu') });
      this.gpuHistory = new MinuteHistory(homePath(d.home, 'gpuHistory'), log.child('gpu'));
    }
    this.runner = new InferenceRunner({
      registry: this.registry,
      admit: (model, o) => this.scheduler.admit(model, o),
      admitOn: (url) => this.scheduler.admitOn(url),
      book: this.book,
      log: log.child('requests'),
      headersTimeoutMs: a.engineHeadersTimeoutMs,
      idleTimeoutMs: a.engineIdleTimeoutMs,
      totalTimeoutMs: a.engineTotalTimeoutMs,
      onEngineTrouble: (url, condition, error) => {
        if (condition === 'suspect') void this.health.probeNow(url);
        else if (condition === 'unresponsive') this.health.markSuspect(url, error);
        else this.health.markDown(url, condition, error);
      },
    });
    this.warmup = new Warmup(
      this.registry,
      this.runner,
      log.child('warmup'),
      () => this.latestSample(),
      undefined,
      () => {
        d.modelHealth();
        d.changed();
      },
    );
    wireEngines(this, { announce: d.announce, modelHealth: d.modelHealth, changed: d.changed, log: this.l });
    this.register(d.life);
  }

  /** Asks every Ollama engine here to unload the models this agent serves from it (keep_alive 0, Ollama's "Unload a
   * model"); the owner's other Ollama models are left as they are. */
  async unloadOllamaModels(only?: ReadonlySet<string>): Promise<void> {
    const targets = this.registry
      .all()
      .filter((m) => m.enabled && (!only || only.has(m.id)))
      .flatMap((m) => m.endpoints.filter((e) => e.engineType === 'ollama').map((e) => ({ url: e.url, apiKey: e.apiKey, model: e.localModel ?? m.id })));
    await Promise.all(
      targets.map(async (t) => {
        try {
          const o = await this.runner.open({
            purpose: 'ollama-unload',
            target: { url: t.url, ...(t.apiKey ? { apiKey: t.apiKey } : {}) },
            path: '/api/generate',
            body: { json: { model: t.model, keep_alive: 0 } },
            signal: AbortSignal.timeout(10_000),
            timeoutMs: 10_000,
          });
          o.res.resume();
          await new Promise((resolve) => o.res.once('close', resolve));
          o.done();
          if ((o.res.statusCode ?? 0) >= 400) throw new Error(`HTTP ${o.res.statusCode}`);
          this.l.info(`paused: ${t.model} unloaded from the GPU by Ollama at ${t.url}`);
        } catch (e) {
          this.l.warn(`paused, but Ollama at ${t.url} did not unload ${t.model}: ${(e as Error).message}`, { code: 'ollama_unload_failed' });
        }
      }),
    );
  }

  /** What detection found (empty until it ran). */
  get gpu(): GpuInventory {
    return this.inventory;
  }

  /** The models the hub is told of: the registry's served set less what self-healing withdrew, none while paused. */
  announced(): string[] {
    return this.pause.state().paused ? [] : this.registry.announced().filter((id) => !this.selfHeal.isWithdrawn(id) && !this.gpuHolds.isHeld(id));
  }

  /** The health of the announced models only: a withdrawn model, or any while paused, is not reported. */
  announcedHealth(): Record<string, ModelHealth> {
    return Object.fromEntries(this.announced().map((id) => [id, this.registry.healthOf(id)]));
  }

  latestSample(): GpuSample | null {
    return this.sampler?.latest() ?? null;
  }

  /** models.json was written here ("serve this"): read it now rather than when the watcher wakes, and rebuild. */
  reloadModelsJson(): void {
    if (!this.modelsWatch?.reload()) this.d.config.modelEntries = readModelsJson(modelsJsonOf(this.d.config));
    this.models.rebuild();
  }

  /**
   * A managed engine changed: when what it serves or where changed, the engines are probed again (so the
   * registry knows the engine's type and report) and the model set rebuilt; the console hears of it either way.
   */
  private managedChanged(): void {
    const entries = JSON.stringify(this.managed.entries());
    if (entries !== this.managedEntries) {
      this.managedEntries = entries;
      this.models.rebuild();
      void this.models.rescan().catch((e: unknown) => this.l.warn(`engine rescan after a managed engine changed: ${(e as Error).message}`));
    }
    this.d.changed();
  }

  private register(life: Lifecycle): void {
    life.add({
      name: 'models',
      start: () => {
        this.models.rebuild();
        // An edit may name a new engine: it is probed (its report checks the mapping), then the set rebuilt.
        this.modelsWatch = watchModelsJson(this.d.config, this.l, () => {
          this.models.rebuild();
          void this.models.rescan().catch((e: unknown) => this.l.warn(`engine rescan after models.json changed: ${(e as Error).message}`));
        });
        // config.toml too: its live settings (the models to serve among them) rebuild the set; the rest say "restart".
        this.configWatch = watchConfigToml(this.d.config, this.d.env, this.l, () => {
          this.models.rebuild();
          this.d.changed();
        });
      },
      stop: () => {
        this.modelsWatch?.close();
        this.configWatch?.close();
      },
    });
    // After the model set is read; stopped before it (the hub link, built later, has stopped by then).
    life.add({ name: 'managed engines', start: () => this.managed.start(), stop: () => this.managed.stop() });
    // Running downloads are cancelled on stop (what arrived stays: the next download resumes from it).
    life.add({ name: 'model downloads', stop: () => this.downloads.stop() });
    // [Agent] PauseFreesGpu: a pause (the owner's, the schedule's, a busy GPU's) stops them; resuming starts them.
    if (this.d.config.agent.pauseFreesGpu) {
      const follow = (s: { paused: boolean }): void => {
        void this.managed.setSuspended(s.paused);
        // Ollama keeps a model in GPU memory for minutes after its last request: unloaded now. Nothing to do on
        // resume: the next request (or the hub's warmup) loads it again.
        if (s.paused) void this.unloadOllamaModels();
      };
      life.add({
        name: 'pause frees the GPU',
        start: () => {
          this.pause.on('change', follow);
          if (this.pause.state().paused) follow(this.pause.state());
        },
        stop: () => void this.pause.off('change', follow),
      });
    }
    life.add({ name: 'engine health', start: () => this.health.start(), stop: () => this.health.stop() });
    life.add({
      name: 'engine discovery',
      start: () => {
        this.discovery.start();
        void this.discovery.firstScan.then(() => this.models.markProbed());
      },
      stop: () => this.discovery.stop(),
    });
    life.onStop('pause', () => {
      this.pause.close();
      this.gpuHolds.close();
    });
    const { sampler, gpuHistory } = this;
    // Before the sampler: the sampler stops first, then the history takes its last sample and closes.
    if (gpuHistory) {
      life.onStop('GPU history', async () => {
        gpuHistory.close();
        await gpuHistory.flushed();
      });
    }
    if (sampler) life.add({ name: 'GPU sampler', start: () => sampler.start(), stop: () => sampler.stop() });
    life.add({ name: 'GPU detection', start: () => this.detect() });
  }

  /**
   * Detects the GPUs. The first register waits for them and the context windows (bounded), so it usually
   * carries them; what comes later re-registers.
   */
  private async detect(): Promise<void> {
    const gpuDone = detectGpus({ env: this.d.env, log: this.d.log.child('gpu') }).then((inv) => {
      this.inventory = inv;
      if (inv.gpus.length === 0) this.l.warn(`gpu_count 0: ${inv.note ?? 'no GPU found'}`);
      else this.l.info(`GPUs: ${inv.gpus.map((g) => `${g.model} (${Math.round(g.vramTotalMb / 1024)} GB)`).join(', ')}`);
      this.gpuHolds.setKnown(inv.gpus.map((g) => g.index));
      if (this.gpuHolds.pauses.perGpu) this.pause.clearGpuCauses();
      // With several GPUs found, windows that name GPUs act on them alone from now on.
      this.pause.evaluateSchedule();
      this.d.announce();
    });
    await Promise.race([Promise.all([gpuDone, this.models.contextsReady]), new Promise((r) => setTimeout(r, FIRST_REGISTER_WAIT_MS).unref())]);
  }
}
