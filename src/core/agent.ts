// The Agent: the one façade over the provider. Composes config, identity, hub link, model registry,
// engine discovery and health, scheduler and pause, GPU, ledger and the request book; implements the
// typed bridge (invoke + subscribe) that the desktop app and the browser console use.
import { EventEmitter } from 'node:events';
import type { BridgeBackend } from '../shared/bridge/transport';
import type { BridgeEvent } from '../shared/bridge/events';
import type { AgentSnapshot } from '../shared/views/snapshot';
import type { GpuInventory, LinkReasonCode } from '../shared/types';
import type { AgentOptions } from './agent-options';
import { BridgeHandlers } from './agent/bridge-handlers';
import { EarningsService } from './agent/earnings';
import { InferenceRunner } from './inference/runner';
import { ModelRegistry } from './models/registry';
import { SettingsFile } from './agent/settings';
import { Warmup } from './agent/warmup';
import { Announcer } from './agent/announce';
import { GatewayLifecycle } from './agent/gateway-lifecycle';
import { GpuBusyWatch } from './agent/gpu-busy';
import { LedgerBatch } from './agent/ledger-batch';
import { RequestLines } from './agent/request-log';
import { buildSnapshot } from './agent/snapshot';
import { engineHosts, ModelSync } from './agent/model-sync';
import type { AgentActions, AgentParts } from './agent/parts';
import { keyStorageOf, providerKeyOf } from './agent/provider-key';
import { refreshEarningsFlag } from './agent/earnings-flag';
import { CatalogueRefresh } from './agent/catalogue-refresh';
import { hubStatus, type HubStatus } from './agent/hub-status';
import { wireAlerts, wireEngines, wireFeeds, wireRequests, wireServing, type AgentOutlets } from './agent/wiring';
import type { RequestEvents } from './agent/request-events';
import { NETWORK_STAND_INS_ENV, networkStandIns, type NetworkStandIns } from './config/network-stand-ins';
import { hubDialUrl, loadConfig, readModelsJson, type ProviderConfig } from './config/config';
import { loadOrCreateIdentity, type Identity } from './config/identity';
import { ensureHome } from './config/home';
import { FileSecretStore, type SecretStore } from './config/secrets';
import { EngineDiscovery } from './engine/discovery';
import { endpointKey } from './engine/url';
import { HealthMonitor } from './engine/health';
import { healthProbe } from './inference/health-probe';
import { watchModelsJson, type ModelsJsonWatch } from './models/watch';
import { detectGpus } from './gpu/detect';
import { ContextLengths } from './engine/context-length';
import { RequestMetrics } from './hub/request-metrics';
import { GpuSampler } from './gpu/sampler';
import { ProviderGate } from './hub/provider-status';
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
import { RequestBook } from './requests';
import { PauseController } from './scheduler/pause';
import { bindPause } from './scheduler/pause-binding';
import { Scheduler } from './scheduler/scheduler';
import { AlertList } from './alerts/alert-list';
import { OwnerApprovals } from './agent/approvals';
import { DEFAULT_COOLDOWN_MINUTES, WebhookTransport } from './alerts/webhook';
import { homePath } from './config/home-layout';
import { modelsJsonOf } from './models/network-map';
import { MinuteHistory } from './gpu/minute-history';
import { APP_VERSION } from './version';
import { HubView } from './hub/hub-view';
import { Weights } from './weights/weights';
import { ModelFactsBook } from './weights/model-facts';
import { engineReader } from './weights/engine-reader';
import { factsTargets, wireTrust } from './agent/trust-wiring';
import path from 'node:path';
import { AgentMetrics } from './metrics/agent-metrics';
import { wireMetrics } from './metrics/wire';
import { Fleet } from './fleet/fleet';
import { rigSummary, rigUsage } from './fleet/rig-figures';
import { wireFleet } from './fleet/wire';

/** The app's version (package.json, src/core/version.ts). */
export const AGENT_VERSION = APP_VERSION;

export interface AgentEvents {
  state: [AgentSnapshot];
  bridge: [BridgeEvent];
  /** A connection to the hub ended: why, and its stable code. */
  disconnected: [string, LinkReasonCode];
}

export class Agent extends EventEmitter<AgentEvents> implements BridgeBackend {
  // ---- public, read-only: what a host reads (settings, sampler, alerts, and identity below). Everything
  //      else, the request book and the ledger included, is seen through the bridge (invoke/subscribe) ----
  readonly sampler?: GpuSampler;
  readonly settings: SettingsFile;
  /** The one alert list (link down, key refused, engine down, auto-paused, hub notice); transports subscribe. */
  readonly alerts = new AlertList();
  /** Changes held for the owner's approval: hosts show them (the desktop dialog, the terminal) and decide. */
  readonly approvals: OwnerApprovals;
  /** Prometheus metrics (AgentOptions.metrics): what `/metrics` serves. */
  readonly metrics?: AgentMetrics;
  /** Other rigs this console reads, and this rig's read-only fleet API (served by the console server). */
  readonly fleet: Fleet;

  // ---- the parts only the Agent holds (the bridge verbs get theirs through parts(), privately) ----
  private readonly book = new RequestBook();
  private readonly ledger?: Ledger;
  private readonly earnings: EarningsService;
  private readonly log: Log;
  private readonly registry = new ModelRegistry();
  private readonly pause: PauseController;
  private readonly notices: NoticeBook;
  private readonly providerGate: ProviderGate;
  private readonly catalogue: Catalogue;
  private readonly scheduler: Scheduler;
  private readonly link: HubLink;
  private readonly relay: HubRelay;
  private readonly runner: InferenceRunner;
  private readonly gatewayKeys: GatewayKeys;
  private readonly secrets: SecretStore;
  private readonly warmup: Warmup;
  private readonly webhook: WebhookTransport;
  /** GPU metrics per minute for the last 7 days (<home>/gpu-history.jsonl). */
  private readonly gpuHistory?: MinuteHistory;
  private readonly gatewayLife: GatewayLifecycle;
  private readonly announcer: Announcer;
  private readonly gpuBusy: GpuBusyWatch;
  private readonly ledgerBatch: LedgerBatch;
  private readonly health: HealthMonitor;
  private readonly discovery: EngineDiscovery;
  private readonly models: ModelSync;
  private readonly handlers: BridgeHandlers;
  private readonly challenges: HubChallenges;
  private readonly hubView: HubView;
  private readonly weights: Weights;
  private readonly facts: ModelFactsBook;
  /** Rolling request figures for the heartbeat (Go metric keys). */
  private readonly requestMetrics = new RequestMetrics();
  /** Each announced model's context window (models.json override, else what the engine reports). */
  private readonly contexts = new ContextLengths();
  /** Whether the default engine ports are probed ([Agent] Discovery / --no-discovery). */
  private readonly autoDiscovery: boolean;
  private readonly l: Logger;
  private readonly catalogueRefresh: CatalogueRefresh;
  /** Tests' stand-ins of the named networks (config/network-stand-ins.ts); none for an owner. */
  private readonly standIns: NetworkStandIns;
  private gpu: GpuInventory = { gpus: [], detectedAt: 0, note: 'GPU detection has not run yet' };
  private snapshotTimer?: NodeJS.Timeout;
  /** Request log lines, written right after the turn their requests ended in. */
  private requestLines?: RequestLines;
  private started = false;
  /** Whether a key was configured when the agent started: such an owner skips onboarding. */
  private keyAtStart = false;
  private modelsWatch?: ModelsJsonWatch;
  /** The book's events as the bridge gets them (agent/request-events.ts), set by connect(). */
  private requestEvents?: RequestEvents;

  private constructor(
    private readonly opts: AgentOptions,
    private readonly config: ProviderConfig,
    readonly identity: Identity,
  ) {
    super();
    this.log = opts.log ?? new Log({ file: homePath(opts.home, 'log'), console: false });
    this.l = this.log.child('agent');
    this.standIns = networkStandIns(opts.env ?? process.env);
    this.settings = SettingsFile.in(opts.home);
    this.secrets = opts.secrets ?? new FileSecretStore(opts.home);
    this.gatewayKeys = new GatewayKeys(opts.home);
    this.approvals = new OwnerApprovals({ home: opts.home, log: this.log.child('approvals') });
    this.approvals.on('settled', (approval) => this.emit('bridge', { type: 'approval', approval }));
    // Secret values are redacted by value in logs and the support bundle (see log.ts).
    this.gatewayKeys.onKnownKey = (k) => this.log.addSecrets([k]);
    const a = config.agent;
    this.scheduler = new Scheduler(
      { maxConcurrentPerEndpoint: a.maxConcurrentPerEndpoint, maxQueuePerModel: a.maxQueuePerModel, queueTimeoutMs: a.queueTimeoutMs },
      this.log.child('scheduler'),
    );
    this.pause = new PauseController({ engineInFlight: () => this.scheduler.inFlight(), log: this.log.child('pause') });
    bindPause(this.pause, this.scheduler);
    this.health = new HealthMonitor({
      intervalMs: a.healthCheckIntervalMs,
      log: this.log.child('health'),
      deepEvery: a.deepHealthCheckEvery,
      // The deep check's one-token chat goes through the engine-call service (built below; probes start with start()).
      probe: healthProbe({ run: (req, sink) => this.runner.run(req, sink) }),
    });
    // With discovery off, only the addresses the owner named are probed (none of the default ports).
    this.autoDiscovery = opts.discovery ?? config.agent.discovery;
    this.discovery = new EngineDiscovery({
      hosts: engineHosts(config, this.settings),
      ...(this.autoDiscovery ? {} : { probeUrls: [] }),
      // An engine models.json gives a key is probed with it, as every other call to it is.
      keyFor: (url) => Object.values(this.config.modelEntries).find((m) => m.api_key && endpointKey(m.endpoint) === url)?.api_key,
      log: this.log.child('discovery'),
    });
    this.models = new ModelSync({
      config,
      settings: this.settings,
      log: this.log,
      l: this.l,
      registry: this.registry,
      scheduler: this.scheduler,
      health: this.health,
      discovery: this.discovery,
      contexts: this.contexts,
      autoDiscovery: this.autoDiscovery,
      announced: () => this.announcedModels(),
      announce: () => this.announce(),
    });
    if (opts.gpu ?? true) {
      this.sampler = new GpuSampler({ intervalMs: a.gpuSampleIntervalMs, env: opts.env ?? process.env, log: this.log.child('gpu') });
      this.gpuHistory = new MinuteHistory(homePath(opts.home, 'gpuHistory'), this.log.child('gpu'));
    }
    try {
      // Checkpoints on their own thread: their fsyncs never hold the streams this thread relays.
      this.ledger = Ledger.open(homePath(opts.home, 'ledger'), { log: this.log.child('ledger'), checkpointOffThread: true });
    } catch (e) {
      this.l.error(`usage history is unavailable: ${(e as Error).message}. Serving continues; records are kept in memory.`);
    }
    this.earnings = new EarningsService({
      home: opts.home,
      ...(this.ledger ? { ledger: this.ledger } : {}),
      log: this.log.child('earnings'),
      serviceUrl: () => this.serviceUrl(),
      providerKey: () => this.providerKey(),
      models: () => this.registry.announced(),
      machine: () => ({
        known: this.registry.all().map((m) => m.id),
        ollamaEngines: this.models.engineList().filter((e) => e.type === 'ollama' && e.reachable).map((e) => e.url),
        vramGb: this.gpu.gpus.length > 0 ? this.gpu.gpus.reduce((t, g) => t + g.vramTotalMb, 0) / 1024 : null,
      }),
      onPulled: () => void this.models.rescan(),
      openPull: (target, path, body, signal) => this.runner.open({ purpose: 'ollama-pull', target, path, body, signal, timeoutMs: 120_000 }),
      modelsFile: modelsJsonOf(config),
      // "Serve this": models.json now maps the network id to the engine's own name; switch it on, tell the hub.
      onMapped: (id) => {
        this.settings.update((s) => ({ ...s, models: { ...s.models, [id]: { ...s.models?.[id], enabled: true } } }));
        if (!this.modelsWatch?.reload()) this.config.modelEntries = readModelsJson(modelsJsonOf(this.config));
        this.models.rebuild();
      },
    });
    const s = this.settings.get();
    const dial = hubDialUrl(this.standIns.hubUrl(s.hubUrl ?? config.webSocketUrl));
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
    const env = opts.env ?? process.env;
    const userHome = env.HOME || env.USERPROFILE;
    this.weights = new Weights({
      dir: homePath(opts.home, 'weights'),
      // A Go node's downloads (~/.swan/models/<id>), looked up only when the environment names a home.
      ...(userHome ? { goModelsDir: path.join(userHome, '.swan', 'models') } : {}),
      log: this.log.child('weights'),
    });
    this.facts = new ModelFactsBook({ read: engineReader(), where: { env }, weights: this.weights, log: this.log.child('weights'), typeOf: (url) => this.contexts.typeOf(url) });
    this.hubView = new HubView({ log: this.log.child('hub'), file: homePath(opts.home, 'hubView') });
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
      facts: (id) => this.facts.facts(id),
      weightHash: (id) => this.weights.compositeHash(id),
    });
    this.runner = new InferenceRunner({
      registry: this.registry,
      admit: (model, o) => this.scheduler.admit(model, o),
      admitOn: (url) => this.scheduler.admitOn(url),
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
      finalSent: (id) => this.ledgerBatch.markDelivered(id),
      // A request the hub cancelled is not "never told": the hub ended it (the Usage page's reasons).
      hubEnded: (id) => this.ledgerBatch.markDelivered(id),
    });
    this.notices = new NoticeBook({ home: opts.home, log: this.log.child('notices') });
    this.challenges = new HubChallenges({
      warmup: this.warmup,
      service: this.runner,
      registry: this.registry,
      weights: this.weights,
      send: (m) => void this.link.sendControl(m),
      log: this.l,
    });
    const serviceUrl = (): string => this.serviceUrl();
    this.providerGate = new ProviderGate({ serviceUrl, key: () => this.providerKey(), log: this.log.child('status'), connect: () => this.link.start() });
    this.catalogue = new Catalogue({ serviceUrl, log: this.log.child('catalogue') });
    this.catalogueRefresh = new CatalogueRefresh(this.catalogue, () => this.emitSnapshot());
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
    if (opts.metrics) {
      this.metrics = new AgentMetrics({
        nodeId: identity.nodeId,
        nodeName: () => this.nodeName(),
        version: AGENT_VERSION,
        link: () => this.link.state,
        pause: () => this.pause.state(),
        models: () => {
          const stats = new Map(this.scheduler.stats().map((st) => [st.model, st]));
          return this.registry.all().map((m) => ({ id: m.id, enabled: m.enabled, health: this.registry.healthOf(m.id), inFlight: stats.get(m.id)?.inFlight ?? 0, queued: stats.get(m.id)?.queued ?? 0 }));
        },
        gpuName: (index) => this.gpu.gpus.find((g) => g.index === index)?.model,
        knownModel: (model) => this.registry.get(model) !== undefined,
      });
    }
    this.fleet = new Fleet({
      home: opts.home,
      secrets: this.secrets,
      log: this.log.child('fleet'),
      summary: (access) =>
        rigSummary({ snapshot: () => this.snapshot(), latestSample: () => this.sampler?.latest() ?? null, ...(this.ledger ? { ledger: this.ledger } : {}), alerts: () => this.alerts.list() }, access),
      usage: () =>
        rigUsage({ nodeId: identity.nodeId, nodeName: this.nodeName(), ...(this.ledger ? { ledger: this.ledger } : {}), platform: () => this.earnings.stats.get(), providerKey: this.providerKey() }),
      ...(this.metrics ? { metrics: () => this.metrics!.text() } : {}),
    });
    this.handlers = new BridgeHandlers({ ...this.parts(), ...this.actions() });
    this.connect();
  }

  static async create(opts: AgentOptions): Promise<Agent> {
    const tightened = ensureHome(opts.home);
    const configPath = opts.configPath ?? homePath(opts.home, 'config');
    const config = loadConfig(configPath, opts.env ?? process.env);
    const identity = loadOrCreateIdentity(opts.home, opts.env ?? process.env);
    const agent = new Agent(opts, config, identity);
    agent.keyAtStart = agent.providerKey() !== '';
    agent.log.addSecrets([agent.providerKey(), config.apiKey, ...agent.fleet.rigTokens()]);
    for (const w of config.warnings) agent.l.info(w);
    for (const n of identity.notes) agent.l.info(n);
    for (const s of agent.standIns.active) agent.l.warn(`${NETWORK_STAND_INS_ENV} (tests only): ${s.network} is served by ${s.hubUrl} and ${s.serviceUrl} on this machine`);
    if (tightened.length) agent.l.warn(`These files were readable by other users; they are now private (0600/0700): ${tightened.join(', ')}`);
    return agent;
  }

  /** Which part's events feed which other part (agent/wiring.ts). */
  private connect(): void {
    const outlets: AgentOutlets = {
      bridge: (e) => this.emit('bridge', e),
      listening: () => this.listenerCount('bridge') > 0,
      disconnected: (reason, code) => this.emit('disconnected', reason, code),
      snapshot: () => this.emitSnapshot(),
      announce: () => this.announce(),
    };
    const { link, health, pause, scheduler, registry, log } = this;
    wireServing({ link, pause, scheduler, providerGate: this.providerGate, ...(this.ledger ? { ledger: this.ledger } : {}), log }, outlets);
    wireEngines({ health, discovery: this.discovery, contexts: this.contexts, registry, scheduler, pause, link, identity: this.identity, models: this.models, log }, outlets);
    this.requestLines = new RequestLines(log.child('requests'));
    this.requestEvents = wireRequests({ book: this.book, earnings: this.earnings, ledgerBatch: this.ledgerBatch, requestMetrics: this.requestMetrics, requestLines: this.requestLines, ...(this.ledger ? { ledger: this.ledger } : {}) }, outlets);
    wireFeeds({ ...(this.sampler ? { sampler: this.sampler } : {}), ...(this.gpuHistory ? { gpuHistory: this.gpuHistory } : {}), earnings: this.earnings, log, notices: this.notices }, outlets);
    wireAlerts({ link, health, pause, providerGate: this.providerGate, notices: this.notices, alerts: this.alerts, webhook: this.webhook, log }, outlets);
    wireFleet(this.fleet.reader, this.alerts, outlets.bridge);
    wireTrust({ link, health, registry, announcer: this.announcer, hubView: this.hubView, facts: this.facts, weights: this.weights, announced: () => this.announcedModels() }, outlets);
    if (this.metrics) wireMetrics({ book: this.book, link, ...(this.sampler ? { sampler: this.sampler } : {}), ...(this.ledger ? { ledger: this.ledger } : {}) }, this.metrics);
  }

  // ---- lifecycle ----
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.l.info(`node ${this.identity.nodeId.slice(0, 16)}… (${this.nodeName()}) starting; hub ${this.link.state.hubUrl}`);
    this.models.rebuild();
    this.modelsWatch = watchModelsJson(this.config, this.l, () => this.models.rebuild());
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
    await Promise.race([Promise.all([gpuDone, this.models.contextsReady]), new Promise((r) => setTimeout(r, 3000).unref())]);
    this.gpuBusy.apply();
    this.applyPauseSchedule();
    this.earnings.start();
    await this.applyGateway();
    this.catalogueRefresh.run();
    this.fleet.reader.start();
    // The provider gate's status carries earnings_enabled to the ledger (wireServing); without the gate it is asked for alone.
    if (this.config.enable && this.providerKey()) void this.providerGate.start();
    else if (!this.providerKey()) this.l.warn('No provider key yet: paste it in the console (Settings) or set ApiKey in config.toml / INFERENCE_API_KEY.');
    else {
      this.l.warn('[Inference] Enable = false in config.toml: not connecting to the hub.');
      void this.refreshEarningsFlag();
    }
    this.emitSnapshot();
  }

  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    clearTimeout(this.snapshotTimer);
    this.gpuBusy.stop();
    this.approvals.close();
    this.catalogueRefresh.stop();
    this.fleet.reader.stop();
    this.providerGate.stop();
    this.modelsWatch?.close();
    this.earnings.stop();
    this.ledgerBatch.flush();
    await this.gatewayLife.close();
    this.relay.close();
    this.facts.close();
    await this.weights.close();
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
    await this.ledger?.threadEnded();
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
      engines: this.models.engineList(),
      nodeName: this.nodeName(),
      hasKey: this.providerKey() !== '',
      keyAtStart: this.keyAtStart,
      discovery: this.autoDiscovery,
      running: this.started,
      hubView: this.hubView.view(),
      weights: this.weights.view(),
    });
  }

  /** The hub connection and the relay as plain data, for tools and tests (agent/hub-status.ts). */
  hubStatus(): HubStatus {
    return hubStatus(this.link, this.relay);
  }

  /** What the bridge verbs use (agent/parts.ts): handed over privately, never public fields. */
  private parts(): AgentParts {
    const { opts, config, identity, log, book, registry, pause, link, runner, earnings, settings, gatewayKeys, secrets, warmup, notices, providerGate, catalogue, alerts, webhook, approvals, fleet, standIns } = this;
    return {
      opts, config, identity, log, book, registry, pause, link, runner, earnings, settings, gatewayKeys, secrets, warmup, notices, providerGate, catalogue, alerts, webhook, approvals, fleet, standIns,
      ...(this.sampler ? { sampler: this.sampler } : {}),
      ...(this.ledger ? { ledger: this.ledger } : {}),
      ...(this.gpuHistory ? { gpuHistory: this.gpuHistory } : {}),
    };
  }

  private actions(): AgentActions {
    return {
      snapshot: () => this.snapshot(),
      requestText: (id) => {
        this.requestEvents?.flush();
        return this.book.text(id);
      },
      emitSnapshot: () => this.emitSnapshot(),
      nodeName: () => this.nodeName(),
      providerKey: () => this.providerKey(),
      keyStorage: () => keyStorageOf({ env: this.opts.env ?? process.env, secrets: this.secrets, config: this.config }),
      engineList: () => this.models.engineList(),
      rescanEngines: (extra) => this.models.rescan(extra),
      forgetEngine: (url) => this.models.forget(url),
      rebuildModels: () => this.models.rebuild(),
      watchGpuBusy: () => this.gpuBusy.apply(),
      applyPauseSchedule: () => this.applyPauseSchedule(),
      refreshEarningsFlag: () => this.refreshEarningsFlag(),
      refreshCatalogue: () => this.catalogueRefresh.run(),
      applyGateway: () => this.applyGateway(),
    };
  }

  // ---- the actions ----
  private nodeName(): string {
    return this.settings.get().nodeName ?? this.config.nodeName;
  }

  private serviceUrl(): string {
    return this.standIns.serviceUrl(this.settings.get().serviceUrl ?? this.config.serviceUrl);
  }

  private providerKey(): string {
    return providerKeyOf({ env: this.opts.env ?? process.env, secrets: this.secrets, config: this.config });
  }

  /** Reads earnings_enabled from the hub's provider status (earnings-flag.ts). */
  private refreshEarningsFlag(): Promise<void> {
    return refreshEarningsFlag({ key: this.providerKey(), serviceUrl: this.serviceUrl(), ...(this.ledger ? { ledger: this.ledger } : {}), log: this.l });
  }

  /** Applies the owner's weekly pause windows (already validated when saved; a bad stored one is logged). */
  private applyPauseSchedule(): void {
    try {
      this.pause.setSchedule(this.settings.get().pauseSchedule ?? []);
    } catch (e) {
      this.l.error(`the saved pause schedule is ignored: ${(e as Error).message}. Fix it in Engines & models.`);
    }
  }

  /** Starts, restarts or stops the local gateway to match the settings (gateway-lifecycle.ts). */
  private async applyGateway(): Promise<void> {
    await this.gatewayLife.apply(this.started);
  }

  private announcedModels(): string[] {
    return this.pause.state().paused ? [] : this.registry.announced();
  }

  /** Coalesces state changes into at most one snapshot event per 100 ms. */
  private emitSnapshot(): void {
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

  /** Re-registers when the announced set changed (announce.ts); the console hears of it either way. */
  private announce(): void {
    // The engines' facts of models not read yet (their files, precision, modalities); a change re-announces.
    const models = this.announcedModels();
    if (models.length > 0) void this.facts.refresh(factsTargets(this.registry, models));
    this.announcer.announce();
    this.emitSnapshot();
  }
}
