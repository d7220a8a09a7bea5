// The serving feature: this node on the network and on the owner's machine. It builds the hub link (dial,
// register, heartbeats), the relay that serves the hub's requests, the hub's challenges and notices, the
// provider gate (the key checked before dialling), what is announced and declared (Announcer, the weights
// and the engines' facts, the hub's view back), the local gateway for the owner's apps, and the pause
// policies (the owner's weekly schedule, auto-pause while another program uses the GPU).
import type { LinkReasonCode } from '../../shared/types';
import type { Lifecycle } from '../base/lifecycle';
import { hubDialUrl } from '../config/config';
import type { Identity } from '../config/identity';
import { homePath } from '../config/home-layout';
import type { OwnerValues } from '../config/owner-values';
import { GatewayKeys } from '../gateway/keys';
import { describeFleet } from '../gateway/describe-fleet';
import { HubChallenges } from '../hub/challenges';
import { hubTable } from '../hub/dispatch';
import { HubView } from '../hub/hub-view';
import { HubLink } from '../hub/link';
import { NoticeBook } from '../hub/notices';
import { ProviderGate } from '../hub/provider-status';
import { HubRelay } from '../hub/relay';
import { RequestMetrics } from '../hub/request-metrics';
import type { AgentLog, Logger } from '../base/log';
import { out } from '../protocol/messages';
import { engineReader } from '../weights/engine-reader';
import { ModelFactsBook } from '../weights/model-facts';
import { Weights } from '../weights/weights';
import { Announcer } from './announce';
import { GatewayLifecycle } from './gateway-lifecycle';
import { GpuGuard } from './gpu-guard';
import { GpuBusyWatch } from './gpu-busy-watch';
import { RailRecord } from './rail-record';
import { hubStatus, type HubStatus } from './hub-status';
import { factsTargets, wireTrust } from './trust-wiring';
import type { Accounting } from '../accounting/accounting';
import type { Engines } from '../engines/engines';
import os from 'node:os';
import path from 'node:path';
import { wireServing } from './wiring';
import { modelsDirOf } from '../downloads/models-dir';
import { PowerLimitError, readPowerLimits, setPowerLimit, type PowerLimits } from '../gpu/power-limit';

export interface ServingDeps {
  home: string;
  identity: Identity;
  owner: OwnerValues;
  engines: Engines;
  accounting: Accounting;
  /** The app's version (client_version in register). */
  version: string;
  log: AgentLog;
  life: Lifecycle;
  /** Something the console shows changed. */
  changed: () => void;
  /** A connection to the hub ended: why, and its stable code. */
  disconnected: (reason: string, code: LinkReasonCode) => void;
}

export class Serving {
  readonly link: HubLink;
  readonly relay: HubRelay;
  readonly notices: NoticeBook;
  readonly providerGate: ProviderGate;
  readonly challenges: HubChallenges;
  readonly announcer: Announcer;
  readonly hubView: HubView;
  readonly weights: Weights;
  readonly facts: ModelFactsBook;
  /** Rolling request figures for the heartbeat (Go metric keys). */
  readonly requestMetrics = new RequestMetrics();
  readonly gatewayKeys: GatewayKeys;
  readonly gateway: GatewayLifecycle;
  readonly gpuBusy: GpuBusyWatch;
  /** The temperature and power ceilings (gpu-guard.ts). */
  readonly gpuGuard: GpuGuard;
  private readonly railRecord: RailRecord;
  private readonly l: Logger;

  constructor(private readonly d: ServingDeps) {
    const { owner, engines, accounting, log, identity } = d;
    const { config } = owner;
    const a = config.agent;
    this.l = log.child('agent');
    const dial = hubDialUrl(owner.standIns.hubUrl(owner.hubUrl()));
    if (dial.warning) this.l.warn(dial.warning);
    this.link = new HubLink({
      url: dial.url,
      nodeId: identity.nodeId,
      log: log.child('hub'),
      timings: a,
      register: () => this.announcer.register(),
      heartbeat: () => this.announcer.heartbeat(),
      modelHealth: () => engines.announcedHealth(),
      // Built per connection, after the constructor: every inbound type routed from one table.
      dispatch: (session) => hubTable(session, { relay: this.relay, notices: this.notices, challenges: this.challenges, log: log.child('hub') }),
    });
    const userHome = owner.env.HOME || owner.env.USERPROFILE;
    this.weights = new Weights({
      dir: homePath(d.home, 'weights'),
      // A Go node's downloads (~/.swan/models/<id>), looked up only when the environment names a home.
      ...(userHome ? { goModelsDir: path.join(userHome, '.swan', 'models') } : {}),
      // This agent's own downloads (`models download`, the console), looked up before a Go node's.
      modelsDir: modelsDirOf(d.home, owner.env),
      log: log.child('weights'),
    });
    this.facts = new ModelFactsBook({
      read: engineReader(),
      where: { env: owner.env },
      weights: this.weights,
      log: log.child('weights'),
      typeOf: (url) => engines.contexts.typeOf(url),
    });
    this.hubView = new HubView({ log: log.child('hub'), file: homePath(d.home, 'hubView') });
    this.announcer = new Announcer({
      identity,
      config,
      version: d.version,
      registry: engines.registry,
      contexts: engines.contexts,
      announced: () => engines.announced(),
      announcedHealth: () => engines.announcedHealth(),
      gpu: () => engines.gpu,
      nodeName: () => owner.nodeName(),
      providerKey: () => owner.providerKey(),
      metrics: () => ({
        active_requests: engines.scheduler.inFlight(),
        ...this.requestMetrics.snapshot(),
        retained_bytes: this.relay.retainedBytes,
        retained_requests: this.relay.retainedRequests,
      }),
      latestSample: () => engines.latestSample(),
      reRegister: () => this.link.reRegister(),
      facts: (id) => this.facts.facts(id),
      weightHash: (id) => this.weights.compositeHash(id),
    });
    this.relay = new HubRelay({
      link: this.link,
      runner: engines.runner,
      log: log.child('relay'),
      resumeGraceMs: a.resumeGraceMs,
      resumeTtlMs: a.resumeTtlMs,
      retentionBytes: a.retentionBytes,
      // Commit before send: the ledger row of a request is durable before its stream_end/result leaves
      // (the rows of requests ending in one turn are committed together, then their finals go).
      beforeFinal: () => accounting.batch.committed(),
      finalSent: (id) => accounting.batch.markDelivered(id),
      // A request the hub cancelled is not "never told": the hub ended it (the Usage page's reasons).
      hubEnded: (id) => accounting.batch.markDelivered(id),
    });
    this.notices = new NoticeBook({ home: d.home, log: log.child('notices') });
    this.challenges = new HubChallenges({
      warmup: engines.warmup,
      service: engines.runner,
      registry: engines.registry,
      weights: this.weights,
      send: (m) => void this.link.sendControl(m),
      log: this.l,
    });
    this.providerGate = new ProviderGate({
      serviceUrl: () => owner.serviceUrl(),
      key: () => owner.providerKey(),
      log: log.child('status'),
      connect: () => this.link.start(),
    });
    this.gatewayKeys = new GatewayKeys(d.home);
    // Secret values are redacted by value in logs and the support bundle (see log.ts).
    this.gatewayKeys.onKnownKey = (k) => log.addSecrets([k]);
    this.gateway = new GatewayLifecycle({
      wanted: () => {
        const st = owner.settings.get();
        return { enabled: st.gatewayEnabled ?? config.gateway.enable, listen: st.gatewayListen ?? config.gateway.listen };
      },
      keys: this.gatewayKeys,
      log: log.child('gateway'),
      options: () => ({
        runner: engines.runner,
        // Not announced(): while paused, local clients get the scheduler's clear "paused" refusal.
        models: () => engines.registry.announced(),
        home: d.home,
        websocketAuth: config.gateway.websocketAuth,
        allowedOrigins: config.gateway.allowedOrigins,
        resumeTtlMs: config.agent.resumeTtlMs,
        fleet: () =>
          describeFleet({
            hostname: os.hostname(),
            gpus: engines.gpu.gpus,
            models: engines.registry.all().filter((m) => m.enabled),
            activeRequests: engines.scheduler.inFlight(),
          }),
      }),
      changed: d.changed,
    });
    this.gpuBusy = new GpuBusyWatch({
      pause: engines.pause,
      holds: engines.gpuHolds,
      gpus: () => engines.gpu.gpus,
      foundEngines: () => {
        const managed = new Set(engines.managed.urls());
        return [...new Set(engines.registry.all().flatMap((m) => m.endpoints.map((e) => e.url)))].filter((u) => !managed.has(u));
      },
      enabled: () => owner.settings.get().autoPauseOnGpuBusy ?? false,
      latestSample: () => engines.latestSample() ?? undefined,
      intervalMs: config.agent.gpuProcessCheckMs,
      env: owner.env,
      log: this.l,
    });
    this.railRecord = new RailRecord({ pause: engines.pause, gpuPauses: engines.gpuHolds.pauses, ledger: accounting.ledger });
    this.gpuGuard = new GpuGuard({
      ...(engines.sampler ? { sampler: engines.sampler } : {}),
      scheduler: engines.scheduler,
      pause: engines.pause,
      gpus: engines.gpuHolds.pauses,
      limits: () => {
        const s = owner.settings.get();
        return { temperatureC: s.gpuTemperatureCeilingC ?? config.agent.gpuTemperatureCeilingC, powerW: s.gpuPowerCeilingW ?? config.agent.gpuPowerCeilingW };
      },
      log: this.l,
      record: (r) => this.railRecord.decision(r),
    });
    wireServing(
      { link: this.link, engines, providerGate: this.providerGate, requestMetrics: this.requestMetrics, ledger: accounting.ledger, log: this.l },
      { announce: () => this.announce(), changed: d.changed, disconnected: d.disconnected },
    );
    wireTrust(
      {
        link: this.link,
        health: engines.health,
        registry: engines.registry,
        announcer: this.announcer,
        hubView: this.hubView,
        facts: this.facts,
        weights: this.weights,
        announced: () => engines.announced(),
      },
      { announce: () => this.announce(), snapshot: d.changed },
    );
    this.register(d.life);
  }

  /** Re-registers when the announced set changed (announce.ts); the console hears of it either way. */
  announce(): void {
    // The engines' facts of models not read yet (their files, precision, modalities); a change re-announces.
    const models = this.d.engines.announced();
    if (models.length > 0) void this.facts.refresh(factsTargets(this.d.engines.registry, models));
    this.announcer.announce();
    this.d.changed();
  }

  /** The models' health, to the hub at once (not while paused: it is told of no models then). */
  modelHealth(): void {
    const { pause } = this.d.engines;
    if (!pause.state().paused) this.link.sendControl(out.modelHealth(this.d.identity.nodeId, this.d.engines.announcedHealth()));
  }

  /**
   * The owner consented to have GPU `index`'s power limit set to `w` by the driver (nvidia-smi -pl): set,
   * recorded in the ledger and logged with its code; a refusal (no rights, not supported) is logged and thrown.
   */
  async setPowerLimit(index: number, w: number): Promise<PowerLimits> {
    const before = (await readPowerLimits(this.d.owner.env).catch(() => [])).find((g) => g.index === index);
    try {
      const after = await setPowerLimit(index, w, this.d.owner.env);
      this.railRecord.powerLimit(index, w, before?.limitW ?? null);
      this.l.info(`GPU ${index}: power limit set to ${w} W by the owner`, { code: 'gpu_power_limit_set', gpu: index });
      return after;
    } catch (e) {
      const code = e instanceof PowerLimitError ? e.code : 'tool_failed';
      this.l.warn(`GPU ${index}: power limit not set: ${(e as Error).message}`, { code: `gpu_power_limit_${code}`, gpu: index });
      throw e;
    }
  }

  /** Applies the owner's weekly pause windows (already validated when saved; a bad stored one is logged). */
  applyPauseSchedule(): void {
    try {
      this.d.engines.pause.setSchedule(this.d.owner.settings.get().pauseSchedule ?? []);
    } catch (e) {
      this.l.error(`the saved pause schedule is ignored: ${(e as Error).message}. Fix it in Engines & models.`);
    }
  }

  /** Starts, restarts or stops the local gateway to match the settings (gateway-lifecycle.ts). */
  applyGateway(): Promise<void> {
    return this.gateway.apply(this.d.life.isRunning);
  }

  /** The hub connection and the relay as plain data, for tools and tests (hub-status.ts). */
  status(): HubStatus {
    return hubStatus(this.link, this.relay);
  }

  private register(life: Lifecycle): void {
    // Registered in the reverse of the order they stop in: the gate, the gateway and auto-pause first;
    // then the relay, the facts and weights, the scheduler's queue; the link last.
    life.onStop('hub link', () => this.link.stop());
    life.onStop('scheduler', () => this.d.engines.scheduler.close());
    life.onStop('weights', () => this.weights.close());
    life.onStop('model facts', () => this.facts.close());
    life.onStop('relay', () => this.relay.close());
    life.add({ name: 'rail records', start: () => this.railRecord.started() });
    life.add({
      name: 'auto-pause',
      start: () => {
        this.gpuBusy.apply();
        this.applyPauseSchedule();
      },
      stop: () => this.gpuBusy.stop(),
    });
    life.add({ name: 'GPU guard rails', start: () => this.gpuGuard.start(), stop: () => this.gpuGuard.stop() });
    life.add({ name: 'local gateway', start: () => this.applyGateway(), stop: () => this.gateway.close() });
    life.add({ name: 'provider gate', start: () => this.connect(), stop: () => this.providerGate.stop() });
  }

  /** Checks the key with the platform, then dials (the provider gate); says why when it does not. */
  private connect(): void {
    const { owner, accounting } = this.d;
    // The provider gate's status carries earnings_enabled to the ledger (wireServing); without the gate it is asked for alone.
    if (owner.config.enable && owner.providerKey()) void this.providerGate.start();
    else if (owner.keyHeld().length > 0)
      this.l.warn(
        `The provider key in use was never allowed to go to ${owner.keyHeld().join(' and ')}: it is not sent until you approve it (the agent asks below), or set the address back.`,
        { code: 'key_destination_held' },
      );
    else if (!owner.providerKey()) this.l.warn('No provider key yet: paste it in the console (Settings) or set ApiKey in config.toml / INFERENCE_API_KEY.');
    else {
      this.l.warn('[Inference] Enable = false in config.toml: not connecting to the hub.');
      void accounting.refreshEarningsFlag();
    }
  }
}
