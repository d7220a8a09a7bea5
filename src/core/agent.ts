// The Agent: the one façade over the provider. Composes config, identity, hub link, model registry,
// engine discovery and health, scheduler and pause, GPU, ledger and the request book; implements the
// typed bridge (invoke + subscribe) that the desktop app and the browser console use.
import { EventEmitter } from 'node:events';
import type { AgentSnapshot, BridgeBackend, BridgeEvent } from '../shared/bridge';
import type { EngineInfo, GpuInventory, GpuSample, PauseState } from '../shared/types';
import type { AgentOptions } from './agent-options';
import { BridgeHandlers } from './agent/bridge-handlers';
import { EarningsService } from './agent/earnings';
import { InferenceRunner } from './inference/runner';
import { INTERNAL_ID } from './inference/internal';
import { ModelRegistry } from './agent/models';
import { SettingsFile } from './agent/settings';
import { Warmup } from './agent/warmup';
import { Announcer } from './agent/announce';
import { GatewayLifecycle } from './agent/gateway-lifecycle';
import { GpuBusyWatch } from './agent/gpu-busy';
import { LedgerBatch } from './agent/ledger-batch';
import { RequestLines } from './agent/request-log';
import { buildSnapshot } from './agent/snapshot';
import { syncScheduler } from './agent/scheduler-sync';
import { hubDialUrl, loadConfig, readModelsJson, type ProviderConfig } from './config/config';
import { loadOrCreateIdentity, type Identity } from './config/identity';
import { ensureHome } from './config/home';
import { FileSecretStore, type SecretStore } from './config/secrets';
import { EngineDiscovery } from './engine/discovery';
import { HealthMonitor, type CapacityChange, type HealthChange } from './engine/health';
import { engineSlots } from './scheduler/capacity';
import { watchModelsJson, type ModelsJsonWatch } from './agent/models-watch';
import { detectGpus } from './gpu/detect';
import { ContextLengths } from './engine/context-length';
import { RequestMetrics } from './hub/request-metrics';
import { GpuSampler } from './gpu/sampler';
import { fetchProviderStatus, ProviderGate } from './hub/provider-status';
import { NoticeBook } from './hub/notices';
import { Catalogue } from './platform/catalogue';
import { HubChallenges } from './hub/challenges';
import { hubTable } from './hub/dispatch';
import { HubLink } from './hub/link';
import { HubRelay } from './hub/relay';
import { Ledger } from './ledger/ledger';
import { describeFleet } from './gateway/fleet';
import { GatewayKeys } from './gateway/keys';
import os from 'node:os';
import { Log, type Logger } from './log';
import { out } from './protocol/messages';
import { RequestBook } from './requests';
import { PauseController } from './scheduler/pause';
import { bindPause } from './scheduler/pause-binding';
import { Scheduler } from './scheduler/scheduler';
import { AlertList } from './alerts/alert-list';
import { noticesFromEmitter } from './alerts/notice-source';
import { RequestEvents } from './agent/request-events';
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
  private readonly gatewayLife: GatewayLifecycle;
  private readonly announcer: Announcer;
  private readonly gpuBusy: GpuBusyWatch;
  private readonly ledgerBatch: LedgerBatch;
  readonly secrets: SecretStore;
  private readonly health: HealthMonitor;
  private readonly discovery: EngineDiscovery;
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  readonly autoDiscovery: boolean;
  private readonly handlers: BridgeHandlers;
  readonly warmup: Warmup;
  readonly notices: NoticeBook;
  private readonly challenges: HubChallenges;
  readonly providerGate: ProviderGate;
  readonly catalogue: Catalogue;
  private catalogueTimer?: NodeJS.Timeout;
  private readonly l: Logger;
  private gpu: GpuInventory = { gpus: [], detectedAt: 0, note: 'GPU detection has not run yet' };
  private engines: EngineInfo[] = [];
  private snapshotTimer?: NodeJS.Timeout;
  /** Request log lines, written right after the turn their requests ended in. */
  private requestLines?: RequestLines;
  private started = false;
  /** Whether a key was configured when the agent started: such an owner skips onboarding. */
  private keyAtStart = false;
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
      register: () => this.announcer.register(),
      heartbeat: () => this.announcer.heartbeat(),
      modelHealth: () => (this.pause.state().paused ? {} : this.registry.healthMap()),
      // Built per connection, after the constructor: every inbound type routed from one table.
      dispatch: (session) => hubTable(session, { relay: this.relay, notices: this.notices, challenges: this.challenges, log: this.log.child('hub') }),
    });
    this.announcer = new Announcer({
      identity,
      config,
      version: AGENT_VERSION,
      registry: this.registry,
      contexts: this.contexts,
      announced: () => this.announcedModels(),
      gpu: () => this.gpu,
      nodeName: () => this.nodeName(),
      providerKey: () => this.providerKey(),
      metrics: () => ({
        active_requests: this.scheduler.inFlight(),
        ...this.requestMetrics.snapshot(),
        retained_bytes: this.relay.retainedBytes,
        retained_requests: this.relay.retainedRequests,
      }),
      latestSample: () => this.sampler?.latest() ?? null,
      reRegister: () => this.link.reRegister(),
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
    this.warmup = new Warmup(this.registry, this.runner, this.log.child('warmup'), () => this.sampler?.latest() ?? null);
    this.relay = new HubRelay({
      link: this.link,
      runner: this.runner,
      log: this.log.child('relay'),
      resumeGraceMs: a.resumeGraceMs,
      resumeTtlMs: a.resumeTtlMs,
      retentionBytes: a.retentionBytes,
      // Commit before send: the ledger row of a request is durable before its stream_end/result leaves
      // (the rows of requests ending in one turn are committed together, then their finals go).
      beforeFinal: () => this.ledgerBatch.committed(),
      finalSent: (id) => this.ledger?.markDelivered(id),
    });
    this.notices = new NoticeBook({ home: opts.home, log: this.log.child('notices') });
    this.challenges = new HubChallenges({
      warmup: this.warmup,
      service: this.runner,
      registry: this.registry,
      engines: () => this.engines,
      send: (m) => void this.link.sendControl(m),
      log: this.l,
    });
    const serviceUrl = (): string => this.settings.get().serviceUrl ?? this.config.serviceUrl;
    this.providerGate = new ProviderGate({ serviceUrl, key: () => this.providerKey(), log: this.log.child('status'), connect: () => this.link.start() });
    this.catalogue = new Catalogue({ serviceUrl, log: this.log.child('catalogue') });
    this.webhook = new WebhookTransport({
      url: () => this.settings.get().alertWebhookUrl || undefined,
      cooldownMs: () => (this.settings.get().alertCooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES) * 60_000,
      node: () => this.nodeName(),
      log: this.log.child('alerts'),
    });
    this.ledgerBatch = new LedgerBatch(this.ledger);
    this.gpuBusy = new GpuBusyWatch({
      pause: this.pause,
      enabled: () => this.settings.get().autoPauseOnGpuBusy ?? false,
      latestSample: () => this.sampler?.latest() ?? undefined,
      env: opts.env ?? process.env,
      log: this.l,
    });
    this.gatewayLife = new GatewayLifecycle({
      wanted: () => {
        const st = this.settings.get();
        return { enabled: st.gatewayEnabled ?? this.config.gateway.enable, listen: st.gatewayListen ?? this.config.gateway.listen };
      },
      keys: this.gatewayKeys,
      log: this.log.child('gateway'),
      options: () => ({
        runner: this.runner,
        // Not announcedModels(): while paused, local clients get the scheduler's clear "paused" refusal.
        models: () => this.registry.announced(),
        home: this.opts.home,
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
      }),
      changed: () => this.emitSnapshot(),
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
    this.gpuBusy.stop();
    clearInterval(this.catalogueTimer);
    this.providerGate.stop();
    this.modelsWatch?.close();
    this.earnings.stop();
    this.ledgerBatch.flush();
    await this.gatewayLife.close();
    this.relay.close();
    this.scheduler.close();
    await this.link.stop();
    this.health.stop();
    this.discovery.stop();
    this.pause.close();
    await this.sampler?.stop();
    this.gpuHistory?.close();
    await this.gpuHistory?.flushed();
    this.ledgerBatch.flush();
    this.ledger?.close();
    this.requestLines?.flush();
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

  /** Re-reads the auto-pause-on-GPU-busy setting (gpu-busy.ts). */
  watchGpuBusy(): void {
    this.gpuBusy.apply();
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

  /** Starts, restarts or stops the local gateway to match the settings (gateway-lifecycle.ts). */
  async applyGateway(): Promise<void> {
    await this.gatewayLife.apply(this.started);
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
    return buildSnapshot({
      version: AGENT_VERSION,
      identity: this.identity,
      config: this.config,
      settings: this.settings,
      link: this.link,
      pause: this.pause,
      scheduler: this.scheduler,
      registry: this.registry,
      ...(this.ledger ? { ledger: this.ledger } : {}),
      earnings: this.earnings,
      gateway: this.gatewayLife,
      providerGate: this.providerGate,
      catalogue: this.catalogue,
      gpu: this.gpu,
      engines: this.engines,
      nodeName: this.nodeName(),
      hasKey: this.providerKey() !== '',
      keyAtStart: this.keyAtStart,
      discovery: this.autoDiscovery,
    });
  }

  /** Coalesces state changes into at most one snapshot event per 100 ms. */
  emitSnapshot(): void {
    if (this.snapshotTimer) return;
    // Nobody to tell (headless, no console open): not built at all (it reads the ledger's totals).
    if (this.listenerCount('state') + this.listenerCount('bridge') === 0) return;
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
    syncScheduler(this.registry, this.scheduler, this.config.agent);
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

  /** Re-registers when the announced set changed (announce.ts); the console hears of it either way. */
  announce(): void {
    this.announcer.announce();
    this.emitSnapshot();
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
    // Per-chunk book events reach the bridge coalesced per event-loop turn, and not at all unheard.
    const requestEvents = new RequestEvents((e) => this.emit('bridge', e), () => this.listenerCount('bridge') > 0);
    this.book.on('update', (request) => {
      this.earnings.onRequestUpdate(request);
      requestEvents.update(request);
    });
    this.book.on('text', (id, delta) => requestEvents.text(id, delta));
    const requestLines = (this.requestLines = new RequestLines(this.log.child('requests')));
    this.book.on('finished', (record) => {
      this.earnings.onFinished(record);
      this.ledgerBatch.queue(record);
      // Internal generations are always booked 'local'; a hub id that happens to share the prefix still counts.
      if (record.source !== 'local' || !INTERNAL_ID.test(record.requestId)) this.requestMetrics.record(record);
      requestLines.finished(record);
      this.emitSnapshot();
    });
    this.log.on('entry', (entry) => this.emit('bridge', { type: 'log', entry }));
    this.notices.on('notice', (notice) => this.emit('bridge', { type: 'notice', notice }));
    this.providerGate.on('change', () => this.emitSnapshot());
    watchForAlerts({ link: this.link, health: this.health, pause: this.pause, providerStatus: this.providerGate, notices: noticesFromEmitter(this.notices) }, this.alerts);
    this.alerts.on('alert', (alert) => {
      this.log.child('alerts').warn(`${alert.title}: ${alert.text}`);
      this.webhook.handle(alert);
      this.emit('bridge', { type: 'alert', alert });
    });
  }
}
