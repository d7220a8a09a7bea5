// The Agent: the one façade over the provider. Composes config, identity, hub link, model registry,
// engine discovery and health, scheduler and pause, GPU, ledger and the request book; implements the
// typed bridge (invoke + subscribe) that the desktop app and the browser console use.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { AgentSnapshot, BridgeBackend, BridgeEvent } from '../shared/bridge';
import type { EngineInfo, GpuInventory, GpuSample, PauseState, UsageRecord } from '../shared/types';
import type { AgentOptions } from './agent-options';
import { BridgeHandlers } from './agent/bridge-handlers';
import { EarningsService } from './agent/earnings';
import { InferenceRunner } from './inference/runner';
import { ModelRegistry } from './agent/models';
import { SettingsFile } from './agent/settings';
import { Warmup } from './agent/warmup';
import { hubDialUrl, loadConfig, readModelsJson, type ProviderConfig } from './config/config';
import { loadOrCreateIdentity, type Identity } from './config/identity';
import { ensureHome } from './config/home';
import { FileSecretStore, type SecretStore } from './config/secrets';
import { EngineDiscovery } from './engine/discovery';
import { HealthMonitor, type CapacityChange, type HealthChange } from './engine/health';
import { endpointLimit, engineSlots } from './scheduler/capacity';
import { watchModelsJson, type ModelsJsonWatch } from './agent/models-watch';
import { detectGpus } from './gpu/detect';
import { hardwareBlock, mostCommonEngine } from './gpu/hardware';
import { ContextLengths } from './engine/context-length';
import { RequestMetrics } from './hub/request-metrics';
import { GpuSampler } from './gpu/sampler';
import { heartbeatMetrics } from './gpu/metrics';
import { listGpuProcesses } from './gpu/processes';
import { fetchProviderStatus, ProviderGate } from './hub/provider-status';
import { NoticeBook } from './hub/notices';
import { Catalogue } from './platform/catalogue';
import { handleBenchmark } from './hub/benchmark';
import { HubLink } from './hub/link';
import { HubRelay } from './hub/relay';
import { handleVerify } from './hub/verify';
import { requestJson } from './engine/client';
import type { EngineEndpoint, EngineRequestOptions, NonStreamResult } from './engine/types';
import { Ledger } from './ledger/ledger';
import { describeFleet } from './gateway/fleet';
import { GatewayKeys } from './gateway/keys';
import { parseListen } from './gateway/options';
import { startGateway, type Gateway } from './gateway/server';
import os from 'node:os';
import { Log, type Logger } from './log';
import { CAPABILITIES, out, PROTOCOL_VERSION, type HubHardware, type Inbound, type ModelHash, type RegisterPayload } from './protocol/messages';
import { RequestBook } from './requests';
import { PauseController } from './scheduler/pause';
import { bindPause } from './scheduler/pause-binding';
import { Scheduler } from './scheduler/scheduler';
import { AlertList } from './alerts/alert-list';
import { noticesFromBridge } from './alerts/notice-source';
import { watchForAlerts } from './alerts/watch';
import { DEFAULT_COOLDOWN_MINUTES, WebhookTransport } from './alerts/webhook';
import { homePath, KEY_SECRET } from './config/home-layout';
import { modelsJsonOf } from './agent/network-model-map';
import { MinuteHistory } from './gpu/minute-history';

export const AGENT_VERSION = '0.1.0';

export interface AgentEvents {
  state: [AgentSnapshot];
  bridge: [BridgeEvent];
}

export class Agent extends EventEmitter<AgentEvents> implements BridgeBackend {
  readonly log: Log;
  readonly book = new RequestBook();
  readonly registry = new ModelRegistry();
  readonly scheduler: Scheduler;
  readonly pause: PauseController;
  readonly link: HubLink;
  readonly relay: HubRelay;
  readonly runner: InferenceRunner;
  readonly sampler?: GpuSampler;
  readonly ledger?: Ledger;
  readonly earnings: EarningsService;
  readonly settings: SettingsFile;
  readonly gatewayKeys: GatewayKeys;
  private gateway?: Gateway;
  private gatewayError?: string;
  readonly secrets: SecretStore;
  private readonly health: HealthMonitor;
  private readonly discovery: EngineDiscovery;
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  readonly autoDiscovery: boolean;
  private readonly handlers: BridgeHandlers;
  readonly warmup: Warmup;
  readonly notices: NoticeBook;
  readonly providerGate: ProviderGate;
  readonly catalogue: Catalogue;
  private catalogueTimer?: NodeJS.Timeout;
  private readonly l: Logger;
  private gpu: GpuInventory = { gpus: [], detectedAt: 0, note: 'GPU detection has not run yet' };
  private engines: EngineInfo[] = [];
  private snapshotTimer?: NodeJS.Timeout;
  private gpuBusyTimer?: NodeJS.Timeout;
  private started = false;
  private lastAnnounced = '';
  /** Whether a key was configured when the agent started: such an owner skips onboarding. */
  private keyAtStart = false;
  private readonly ledgerBatch: UsageRecord[] = [];
  /** Rolling request figures for the heartbeat (Go metric keys). */
  readonly requestMetrics = new RequestMetrics();
  /** Each announced model's context window (models.json override, else what the engine reports). */
  readonly contexts = new ContextLengths();
  private modelsWatch?: ModelsJsonWatch;
  /** The one alert list (link down, key refused, engine down, auto-paused, hub notice); transports subscribe. */
  readonly alerts = new AlertList();
  readonly webhook: WebhookTransport;
  private contextsReady: Promise<void> = Promise.resolve();
  /** GPU metrics per minute for the last 7 days (<home>/gpu-history.jsonl). */
  readonly gpuHistory?: MinuteHistory;

  private constructor(
    readonly opts: AgentOptions,
    readonly config: ProviderConfig,
    readonly identity: Identity,
  ) {
    super();
    this.log = opts.log ?? new Log({ file: homePath(opts.home, 'log'), console: false });
    this.l = this.log.child('agent');
    this.settings = SettingsFile.in(opts.home);
    this.secrets = opts.secrets ?? new FileSecretStore(opts.home);
    this.gatewayKeys = new GatewayKeys(opts.home);
    // Secret values are redacted by value in logs and the support bundle (see log.ts).
    this.gatewayKeys.onKnownKey = (k) => this.log.addSecrets([k]);
    const a = config.agent;
    this.scheduler = new Scheduler(
      { maxConcurrentPerEndpoint: a.maxConcurrentPerEndpoint, maxQueuePerModel: a.maxQueuePerModel, queueTimeoutMs: a.queueTimeoutMs },
      this.log.child('scheduler'),
    );
    this.pause = new PauseController({ engineInFlight: () => this.scheduler.inFlight(), log: this.log.child('pause') });
    bindPause(this.pause, this.scheduler);
    this.health = new HealthMonitor({ intervalMs: a.healthCheckIntervalMs, log: this.log.child('health') });
    // With discovery off, only the addresses the owner named are probed (none of the default ports).
    this.autoDiscovery = opts.discovery ?? config.agent.discovery;
    this.discovery = new EngineDiscovery({ hosts: this.engineHosts(), ...(this.autoDiscovery ? {} : { probeUrls: [] }), log: this.log.child('discovery') });
    if (opts.gpu ?? true) {
      this.sampler = new GpuSampler({ intervalMs: a.gpuSampleIntervalMs, env: opts.env ?? process.env, log: this.log.child('gpu') });
      this.gpuHistory = new MinuteHistory(homePath(opts.home, 'gpuHistory'), this.log.child('gpu'));
    }
    try {
      this.ledger = Ledger.open(homePath(opts.home, 'ledger'), { log: this.log.child('ledger') });
    } catch (e) {
      this.l.error(`usage history is unavailable: ${(e as Error).message}. Serving continues; records are kept in memory.`);
    }
    this.earnings = new EarningsService({
      home: opts.home,
      ...(this.ledger ? { ledger: this.ledger } : {}),
      log: this.log.child('earnings'),
      serviceUrl: () => this.settings.get().serviceUrl ?? this.config.serviceUrl,
      providerKey: () => this.providerKey(),
      models: () => this.registry.announced(),
      machine: () => ({
        known: this.registry.all().map((m) => m.id),
        ollamaEngines: this.engines.filter((e) => e.type === 'ollama' && e.reachable).map((e) => e.url),
        vramGb: this.gpu.gpus.length > 0 ? this.gpu.gpus.reduce((t, g) => t + g.vramTotalMb, 0) / 1024 : null,
      }),
      onPulled: () => void this.rescanEngines(),
      modelsFile: modelsJsonOf(config),
      // "Serve this": models.json now maps the network id to the engine's own name; switch it on, tell the hub.
      onMapped: (id) => {
        this.settings.update((s) => ({ ...s, models: { ...s.models, [id]: { ...s.models?.[id], enabled: true } } }));
        if (!this.modelsWatch?.reload()) this.config.modelEntries = readModelsJson(modelsJsonOf(this.config));
        this.rebuildModels();
      },
    });
    const s = this.settings.get();
    const dial = hubDialUrl(s.hubUrl ?? config.webSocketUrl);
    if (dial.warning) this.l.warn(dial.warning);
    this.link = new HubLink({
      url: dial.url,
      nodeId: identity.nodeId,
      log: this.log.child('hub'),
      timings: a,
      register: () => this.registerPayload(),
      heartbeat: () => ({
        node_id: identity.nodeId,
        timestamp: Math.floor(Date.now() / 1000),
        models: this.announcedModels(),
        model_health: this.registry.healthMap(),
        metrics: {
          ...heartbeatMetrics(this.sampler?.latest() ?? null),
          active_requests: this.scheduler.inFlight(),
          ...this.requestMetrics.snapshot(),
          retained_bytes: this.relay.retainedBytes,
          retained_requests: this.relay.retainedRequests,
        },
        ...this.hardwareField(),
      }),
      modelHealth: () => (this.pause.state().paused ? {} : this.registry.healthMap()),
    });
    this.runner = new InferenceRunner({
      registry: this.registry,
      admit: (model, o) => this.scheduler.admit(model, o),
      book: this.book,
      log: this.log.child('requests'),
      headersTimeoutMs: a.engineHeadersTimeoutMs,
      idleTimeoutMs: a.engineIdleTimeoutMs,
      onEngineTrouble: (url, condition, error) => (condition === 'suspect' ? void this.health.probeNow(url) : this.health.markDown(url, condition, error)),
    });
    this.warmup = new Warmup(this.registry, this.log.child('warmup'), () => this.sampler?.latest() ?? null);
    this.relay = new HubRelay({
      link: this.link,
      runner: this.runner,
      log: this.log.child('relay'),
      resumeGraceMs: a.resumeGraceMs,
      resumeTtlMs: a.resumeTtlMs,
      retentionBytes: a.retentionBytes,
      onOther: (m) => void this.onHubMessage(m),
      // Commit before send: the ledger row of a request is durable before its stream_end/result leaves.
      beforeFinal: () => this.flushLedger(),
      finalSent: (id) => this.ledger?.markDelivered(id),
    });
    this.notices = new NoticeBook({ home: opts.home, log: this.log.child('notices') });
    const serviceUrl = (): string => this.settings.get().serviceUrl ?? this.config.serviceUrl;
    this.providerGate = new ProviderGate({ serviceUrl, key: () => this.providerKey(), log: this.log.child('status'), connect: () => this.link.start() });
    this.catalogue = new Catalogue({ serviceUrl, log: this.log.child('catalogue') });
    this.webhook = new WebhookTransport({
      url: () => this.settings.get().alertWebhookUrl || undefined,
      cooldownMs: () => (this.settings.get().alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES) * 60_000,
      node: () => this.nodeName(),
      log: this.log.child('alerts'),
    });
    this.handlers = new BridgeHandlers(this);
    this.wire();
  }

  static async create(opts: AgentOptions): Promise<Agent> {
    const tightened = ensureHome(opts.home);
    const configPath = opts.configPath ?? homePath(opts.home, 'config');
    const config = loadConfig(configPath, opts.env ?? process.env);
    const identity = loadOrCreateIdentity(opts.home, opts.env ?? process.env);
    const agent = new Agent(opts, config, identity);
    agent.keyAtStart = agent.providerKey() !== '';
    agent.log.addSecrets([agent.providerKey(), config.apiKey]);
    for (const w of config.warnings) agent.l.info(w);
    for (const n of identity.notes) agent.l.info(n);
    if (tightened.length) agent.l.warn(`These files were readable by other users; they are now private (0600/0700): ${tightened.join(', ')}`);
    return agent;
  }

  // ---- lifecycle ----
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.l.info(`node ${this.identity.nodeId.slice(0, 16)}… (${this.nodeName()}) starting; hub ${this.link.state.hubUrl}`);
    this.rebuildModels();
    this.modelsWatch = watchModelsJson(this.config, this.l, () => this.rebuildModels());
    this.health.start();
    this.discovery.start();
    this.sampler?.start();
    const gpuDone = detectGpus({ env: this.opts.env ?? process.env, log: this.log.child('gpu') }).then((inv) => {
      this.gpu = inv;
      if (inv.gpus.length === 0) this.l.warn(`gpu_count 0: ${inv.note ?? 'no GPU found'}`);
      else this.l.info(`GPUs: ${inv.gpus.map((g) => `${g.model} (${Math.round(g.vramTotalMb / 1024)} GB)`).join(', ')}`);
      this.announce();
    });
    // Register with what we know now; GPU details and context windows follow by re-registering once
    // detected (bounded wait), so the first register usually carries them already.
    await Promise.race([Promise.all([gpuDone, this.contextsReady]), new Promise((r) => setTimeout(r, 3000).unref())]);
    this.watchGpuBusy();
    this.applyPauseSchedule();
    void this.refreshEarningsFlag();
    this.earnings.start();
    await this.applyGateway();
    this.refreshCatalogue();
    if (this.config.enable && this.providerKey()) void this.providerGate.start();
    else if (!this.providerKey()) this.l.warn('No provider key yet: paste it in the console (Settings) or set ApiKey in config.toml / INFERENCE_API_KEY.');
    else this.l.warn('[Inference] Enable = false in config.toml: not connecting to the hub.');
    this.emitSnapshot();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    clearTimeout(this.snapshotTimer);
    clearInterval(this.gpuBusyTimer);
    clearInterval(this.catalogueTimer);
    this.providerGate.stop();
    this.modelsWatch?.close();
    this.earnings.stop();
    this.flushLedger();
    await this.gateway?.close();
    this.gateway = undefined;
    this.relay.close();
    this.scheduler.close();
    await this.link.stop();
    this.health.stop();
    this.discovery.stop();
    this.pause.close();
    await this.sampler?.stop();
    this.gpuHistory?.close();
    await this.gpuHistory?.flushed();
    this.flushLedger();
    this.ledger?.close();
    this.log.flush();
  }

  // ---- bridge ----
  invoke(channel: string, args: unknown): Promise<unknown> {
    return this.handlers.invoke(channel, args);
  }

  subscribe(cb: (event: BridgeEvent) => void): () => void {
    this.on('bridge', cb);
    return () => {
      this.off('bridge', cb);
    };
  }

  // ---- state ----
  nodeName(): string {
    return this.settings.get().nodeName ?? this.config.nodeName;
  }

  providerKey(): string {
    return (this.opts.env ?? process.env).INFERENCE_API_KEY || this.secrets.get(KEY_SECRET) || this.config.apiKey;
  }

  keyStorage(): 'keychain' | 'file' | 'config' | 'env' | 'none' {
    if ((this.opts.env ?? process.env).INFERENCE_API_KEY) return 'env';
    if (this.secrets.get(KEY_SECRET)) return this.secrets.kind;
    return this.config.apiKey ? 'config' : 'none';
  }

  /** Probes engines now (plus `extra` URLs the owner just added) and rebuilds the model set. */
  async rescanEngines(extra: string[] = []): Promise<void> {
    if (!this.autoDiscovery) this.l.info('engine discovery is off ([Agent] Discovery = false): probing only the addresses you added and models.json');
    this.engines = await this.discovery.setHosts([...this.engineHosts(), ...extra]);
    this.rebuildModels();
  }

  /**
   * Auto-pause when another program (a game) uses the GPU: every 5 s while the owner has the setting
   * on, the GPU's process list feeds the pause controller (which has its own hysteresis).
   */
  watchGpuBusy(): void {
    clearInterval(this.gpuBusyTimer);
    this.gpuBusyTimer = undefined;
    if (!(this.settings.get().autoPauseOnGpuBusy ?? false)) {
      this.pause.updateGpuProcesses([]);
      return;
    }
    const check = async (): Promise<void> => {
      try {
        const procs = await listGpuProcesses({ env: this.opts.env ?? process.env });
        this.pause.updateGpuProcesses(procs, this.sampler?.latest() ?? undefined);
      } catch (e) {
        this.l.debug(`GPU process list unavailable: ${(e as Error).message}`);
      }
    };
    void check();
    this.gpuBusyTimer = setInterval(() => void check(), 5000);
    this.gpuBusyTimer.unref();
  }

  /** Applies the owner's weekly pause windows (already validated when saved; a bad stored one is logged). */
  applyPauseSchedule(): void {
    try {
      this.pause.setSchedule(this.settings.get().pauseSchedule ?? []);
    } catch (e) {
      this.l.error(`the saved pause schedule is ignored: ${(e as Error).message}. Fix it in Engines & models.`);
    }
  }

  /** Reads earnings_enabled from the hub's provider status (GET {ServiceURL}/api/v1/provider/status). */
  async refreshEarningsFlag(): Promise<void> {
    const key = this.providerKey();
    if (!key || !this.ledger) return;
    const serviceUrl = this.settings.get().serviceUrl ?? this.config.serviceUrl;
    const r = await fetchProviderStatus(serviceUrl, key);
    if (r.status?.earnings_enabled !== undefined) this.ledger.setEarningsEnabled(r.status.earnings_enabled);
    else if (r.error) this.l.debug(`provider status unavailable: ${r.error}`);
  }

  /** Fetches the network's model catalogue now and every 30 minutes (a failure keeps the last good list). */
  refreshCatalogue(): void {
    const run = (): void => void this.catalogue.refresh(true).then(() => this.emitSnapshot());
    run();
    clearInterval(this.catalogueTimer);
    this.catalogueTimer = setInterval(run, 30 * 60_000);
    this.catalogueTimer.unref();
  }

  /** Starts, restarts or stops the local gateway to match the settings ([Gateway] overlaid by the console's). */
  async applyGateway(): Promise<void> {
    const s = this.settings.get();
    const enabled = s.gatewayEnabled ?? this.config.gateway.enable;
    const listen = s.gatewayListen ?? this.config.gateway.listen;
    await this.gateway?.close();
    this.gateway = undefined;
    this.gatewayError = undefined;
    if (!enabled || !this.started) {
      this.emitSnapshot();
      return;
    }
    try {
      const { host, port } = parseListen(listen);
      this.gateway = await startGateway({
        host,
        port,
        runner: this.runner,
        // Not announcedModels(): while paused, local clients get the scheduler's clear "paused" refusal.
        models: () => this.registry.announced(),
        keys: this.gatewayKeys,
        home: this.opts.home,
        log: this.log.child('gateway'),
        websocketAuth: this.config.gateway.websocketAuth,
        allowedOrigins: this.config.gateway.allowedOrigins,
        resumeTtlMs: this.config.agent.resumeTtlMs,
        fleet: () =>
          describeFleet({
            hostname: os.hostname(),
            gpus: this.gpu.gpus,
            models: this.registry.all().filter((m) => m.enabled),
            activeRequests: this.scheduler.inFlight(),
          }),
      });
      this.l.info(`local gateway listening on ${this.gateway.url} (keys: ${this.gatewayKeys.size}; create one with "swan-provider keys create")`);
    } catch (e) {
      this.gatewayError = `The local gateway could not start on ${listen}: ${(e as Error).message}. Pick another address in Settings.`;
      this.l.error(this.gatewayError);
    }
    this.emitSnapshot();
  }

  /** Engine URLs the owner named: config's EngineHosts and endpoints added in the console. */
  private engineHosts(): string[] {
    // models.json endpoints too: the Engines card then shows the engine behind each model, with its type.
    const fromModels = Object.values(this.config.modelEntries).map((e) => e.endpoint);
    return [...this.config.agent.engineHosts, ...(this.settings.get().extraEndpoints ?? []).map((e) => e.url), ...fromModels];
  }

  gpuInventory(): GpuInventory {
    return this.gpu;
  }

  engineList(): EngineInfo[] {
    return this.engines;
  }

  announcedModels(): string[] {
    return this.pause.state().paused ? [] : this.registry.announced();
  }

  snapshot(): AgentSnapshot {
    const stats = new Map(this.scheduler.stats().map((s) => [s.model, s]));
    const s = this.settings.get();
    const today = this.ledger?.today() ?? { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
    const todayEarningsReason = this.earnings.todayReason(today);
    return {
      version: AGENT_VERSION,
      nodeId: this.identity.nodeId,
      nodeName: this.nodeName(),
      link: this.link.state,
      pause: this.pause.state(),
      gpu: this.gpu,
      engines: this.engines,
      models: this.registry.view((model) => {
        const st = stats.get(model);
        return {
          inFlight: st?.inFlight ?? 0,
          queued: st?.queued ?? 0,
          maxConcurrent: st?.maxConcurrent ?? this.config.agent.maxConcurrentPerEndpoint,
          maxQueue: st?.maxQueue ?? this.config.agent.maxQueuePerModel,
          endpointInFlight: (url) => st?.endpoints.find((e) => e.url === url)?.inFlight ?? 0,
          endpointCap: (url) => endpointLimit(this.config.agent, this.registry.endpointCapacityOf(url)),
        };
      }),
      today,
      ...(todayEarningsReason ? { todayEarningsReason } : {}),
      gateway: {
        enabled: s.gatewayEnabled ?? this.config.gateway.enable,
        listen: this.gateway ? this.gateway.url.replace(/^http:\/\//, '') : (s.gatewayListen ?? this.config.gateway.listen),
        running: this.gateway !== undefined,
        keys: this.gatewayKeys.size,
        ...(this.gatewayError ? { error: this.gatewayError } : {}),
      },
      hasKey: this.providerKey() !== '',
      onboarded: s.onboarded ?? this.keyAtStart,
      identity: { source: this.identity.source, file: this.identity.file, ...(this.identity.from ? { from: this.identity.from } : {}) },
      providerStatus: this.providerGate.view(),
      catalogue: this.catalogue.view(
        this.registry.all().map((m) => ({ id: m.id, explicit: m.fromConfig, ...(m.endpoints[0]?.localModel ? { localName: m.endpoints[0].localModel } : {}) })),
      ),
      discovery: this.autoDiscovery,
    };
  }

  /** Coalesces state changes into at most one snapshot event per 100 ms. */
  emitSnapshot(): void {
    if (this.snapshotTimer) return;
    this.snapshotTimer = setTimeout(() => {
      this.snapshotTimer = undefined;
      const snap = this.snapshot();
      this.emit('state', snap);
      this.emit('bridge', { type: 'snapshot', snapshot: snap });
    }, 100);
  }

  /** Re-reads models (config + discovery + the owner's toggles) and tells the scheduler, health monitor and hub. */
  rebuildModels(): void {
    const s = this.settings.get();
    this.log.addSecrets(Object.values(this.config.modelEntries).map((e) => e.api_key));
    this.registry.rebuild({ entries: this.config.modelEntries, configModels: this.config.models, engines: this.engines, prefs: s.models ?? {} });
    const enabled = new Set(this.registry.announced());
    for (const st of this.scheduler.stats()) if (!enabled.has(st.model)) this.scheduler.removeModel(st.model);
    for (const m of this.registry.all()) {
      if (!enabled.has(m.id)) continue;
      this.scheduler.setModel(
        m.id,
        m.endpoints.map((ep) => ({
          url: ep.url,
          health: this.registry.endpointConditionOf(ep.url) === 'key_rejected' ? 'degraded' : this.registry.endpointHealthOf(ep.url),
          maxConcurrent: endpointLimit(this.config.agent, this.registry.endpointCapacityOf(ep.url)).max,
        })),
        { ...(m.maxConcurrent !== undefined ? { maxConcurrent: m.maxConcurrent } : {}), ...(m.maxQueue !== undefined ? { maxQueue: m.maxQueue } : {}) },
      );
    }
    this.health.setEndpoints(this.registry.healthTargets());
    this.refreshContexts();
    this.announce();
  }

  /** Re-reads the context windows of the announced models (overrides at once, engines probed). */
  refreshContexts(onlyMissing = false): void {
    this.contextsReady = this.contexts.refresh(
      this.announcedModels().map((id) => {
        const m = this.registry.get(id);
        return { model: id, endpoints: m?.endpoints ?? [], ...(m?.entry?.context_length ? { override: m.entry.context_length } : {}) };
      }),
      onlyMissing,
    );
  }

  private hardwareField(): { hardware?: HubHardware } {
    const hardware = this.hardware();
    return hardware ? { hardware } : {};
  }

  /** Go's HardwareInfo for register and heartbeat; undefined without a GPU. */
  hardware(): HubHardware | undefined {
    const types = this.announcedModels().flatMap((id) =>
      (this.registry.get(id)?.endpoints ?? []).map((e) => (e.engineType && e.engineType !== 'unknown' ? e.engineType : this.contexts.typeOf(e.url))),
    );
    return hardwareBlock(this.gpu, mostCommonEngine(types));
  }

  /** Sends register again when the announced model set (or hardware) changed. */
  announce(): void {
    const models = this.announcedModels();
    const key = JSON.stringify([models, this.gpu.detectedAt, models.map((id) => this.contexts.get(id)), this.hardware()?.serving_engine]);
    if (key !== this.lastAnnounced) {
      this.lastAnnounced = key;
      this.link.reRegister();
    }
    this.emitSnapshot();
  }

  /** Go's RegisterPayload (+ v0.5's context_length and cp_version); see docs/hub-dialect.md. */
  registerPayload(): RegisterPayload {
    const models = this.announcedModels();
    const hardware = this.hardware();
    return {
      node_id: this.identity.nodeId,
      provider_id: this.identity.nodeId,
      worker_addr: this.identity.nodeId,
      owner_addr: this.config.agent.ownerAddr,
      token: this.providerKey(),
      models,
      model_hashes: models.map((id): ModelHash => {
        const e = this.registry.get(id)?.entry;
        const ctx = this.contexts.get(id);
        // No weight hash is computed here, so no hash_algo either (never an algorithm with an empty hash).
        return {
          model_id: id,
          ...(e?.format ? { format: e.format } : {}),
          ...(e?.quantization ? { quantization: e.quantization } : {}),
          ...(ctx.length > 0 && (ctx.source === 'override' || ctx.source === 'detected') ? { context_length: ctx.length, context_source: ctx.source } : {}),
        };
      }),
      capabilities: [...CAPABILITIES],
      ...(hardware ? { hardware } : {}),
      cp_version: AGENT_VERSION,
      node_name: this.nodeName(),
      protocol_version: PROTOCOL_VERSION,
    };
  }

  private wire(): void {
    this.link.on('state', (st) => {
      this.emitSnapshot();
      if (st.state === 'connected') this.l.info('connected to the hub and registered');
    });
    this.contexts.on('change', () => this.announce());
    this.health.on('capacity', (c: CapacityChange) => {
      this.registry.setEndpointCapacity(c.url, engineSlots(c.capacity, c.load));
      this.rebuildModels();
    });
    this.health.on('change', (c: HealthChange) => {
      if (c.health === 'healthy') this.refreshContexts(true);
      this.registry.setEndpointHealth(c.url, c.health, c.error, c.condition);
      // An engine back after a restart: discovery re-reads its models now rather than on its next round.
      if (c.health === 'healthy' && this.discovery && !this.engines.some((e) => e.url === c.url && e.reachable)) void this.rescanEngines();
      // An engine that refuses our key still gets requests when nothing else serves the model, so clients
      // learn "engine rejected the provider's key" (502) rather than a vague "unavailable"; the hub sees unhealthy.
      this.scheduler.setEndpointHealth(c.url, c.condition === 'key_rejected' ? 'degraded' : c.health);
      this.l.info(`engine ${c.url} is ${c.health}${c.error ? `: ${c.error}` : ''}`);
      if (!this.pause.state().paused) this.link.sendControl(out.modelHealth(this.identity.nodeId, this.registry.healthMap()));
      this.emitSnapshot();
    });
    this.discovery.on('change', (engines: EngineInfo[]) => {
      this.engines = engines;
      this.rebuildModels();
    });
    this.pause.on('change', (p: PauseState) => {
      this.l.info(p.paused ? `serving paused: ${p.reason ?? p.cause}` : 'serving resumed');
      this.announce();
    });
    this.scheduler.on('change', () => this.emitSnapshot());
    this.sampler?.on('sample', (sample: GpuSample) => {
      this.earnings.onSample(sample);
      this.gpuHistory?.add(sample);
      this.emit('bridge', { type: 'gpu.sample', sample });
    });
    this.book.on('update', (request) => {
      this.earnings.onRequestUpdate(request);
      this.emit('bridge', { type: 'request.update', request: { ...request } });
    });
    this.book.on('text', (id, delta) => this.emit('bridge', { type: 'request.text', id, delta }));
    this.book.on('finished', (record) => {
      this.earnings.onFinished(record);
      this.queueLedger(record);
      this.requestMetrics.record(record);
      const tps = record.tokensPerSecond ? `, ${record.tokensPerSecond.toFixed(1)} tok/s` : '';
      const line = `${record.source} request ${record.requestId} ${record.model}: ${record.status}${record.error ? ` (${record.error})` : ''}, ${record.tokensIn} in / ${record.tokensOut} out${record.estimated ? ' (estimated)' : ''}, ${record.latencyMs} ms${tps}`;
      if (record.status === 'ok') this.log.child('requests').info(line, { requestId: record.requestId });
      else this.log.child('requests').warn(line, { requestId: record.requestId });
      this.emitSnapshot();
    });
    this.log.on('entry', (entry) => this.emit('bridge', { type: 'log', entry }));
    this.notices.on('notice', (notice) => this.emit('bridge', { type: 'notice', notice }));
    this.providerGate.on('change', () => this.emitSnapshot());
    watchForAlerts({ link: this.link, health: this.health, pause: this.pause, providerStatus: this.providerGate, notices: noticesFromBridge((cb) => this.subscribe(cb)) }, this.alerts);
    this.alerts.on('alert', (alert) => {
      this.log.child('alerts').warn(`${alert.title}: ${alert.text}`);
      this.webhook.handle(alert);
      this.emit('bridge', { type: 'alert', alert });
    });
  }

  /**
   * Requests that finish in the same turn of the event loop (a burst of streams ending together) are
   * written to the ledger in one transaction right after it, instead of one commit each while other
   * streams wait. A record is written within that one turn of its request ending, and never after
   * its last message to the hub: the relay calls flushLedger() (beforeFinal) right before sending
   * a stream_end or result, so the commit always precedes the send.
   */
  private queueLedger(record: UsageRecord): void {
    if (!this.ledger) return;
    this.ledgerBatch.push(record);
    if (this.ledgerBatch.length > 1) return;
    setImmediate(() => this.flushLedger());
  }

  private flushLedger(): void {
    const batch = this.ledgerBatch.splice(0);
    if (batch.length === 1) this.ledger?.record(batch[0]!);
    else if (batch.length > 1) this.ledger?.recordBatch(batch);
  }

  private async onHubMessage(m: Inbound): Promise<void> {
    if (m.type === 'notice') {
      this.notices.receive(m.payload);
      return;
    }
    if (m.type === 'warmup') {
      const r = await this.warmup.run(m.payload.model_id);
      this.link.sendControl(out.warmupResult(m.requestId, { modelId: m.payload.model_id, ...r }));
      return;
    }
    const resolve = (model: string): { endpoint: EngineEndpoint; modelDir?: string } | undefined => {
      const reg = this.registry.get(model);
      const ep = reg?.enabled ? reg.endpoints.find((e) => this.registry.endpointHealthOf(e.url) !== 'unhealthy') : undefined;
      if (!ep) return undefined;
      const root = this.engines.find((e) => e.url === ep.url) as (EngineInfo & { roots?: Record<string, string> }) | undefined;
      const modelDir = root?.roots?.[ep.localModel ?? model];
      return { endpoint: ep, ...(modelDir ? { modelDir } : {}) };
    };
    // Verify and benchmark generations count against capacity like any request.
    const complete = async (o: EngineRequestOptions): Promise<NonStreamResult> => {
      const lease = await this.scheduler.admit(String(o.body.model ?? ''), { requestId: `${m.type}-${crypto.randomUUID()}`, source: 'hub' });
      try {
        return await requestJson(o);
      } finally {
        lease.release();
      }
    };
    if (m.type === 'verify') {
      const reply = await handleVerify(m.payload, { resolve, complete, log: this.l });
      this.link.sendControl({ type: 'verify', ...(m.requestId ? { request_id: m.requestId } : {}), payload: { ...reply } });
      return;
    }
    if (m.type === 'benchmark') {
      const reply = await handleBenchmark(m.payload, { resolve, complete, log: this.l }, m.requestId ?? '');
      this.link.sendControl({ type: 'benchmark_response', ...(m.requestId ? { request_id: m.requestId } : {}), payload: { ...reply } });
    }
  }
}
