// The Agent: the root. It builds the features in order — engines, accounting, serving, owner — and the
// bridge over them, each registering its start and stop in one lifecycle, and offers the hosts (src/main,
// src/cli, the console server) the typed bridge (invoke + subscribe) and the few parts they hold. What the
// agent does lives in the features; what reaches upward is wired here, as ports.
import { EventEmitter } from 'node:events';
import type { AgentSnapshot } from '../shared/views/snapshot';
import type { BridgeBackend } from '../shared/bridge/transport';
import type { BridgeEvent } from '../shared/bridge/events';
import type { LinkReasonCode } from '../shared/types';
import type { AgentOptions } from './agent-options';
import { Lifecycle } from './base/lifecycle';
import { WallClockWatch } from './base/clock';
import { Accounting } from './accounting/accounting';
import { Bridge } from './bridge/bridge';
import type { MachineChecks } from './bridge/verdict';
import { loadConfig, type ProviderConfig } from './config/config';
import { ensureHome } from './config/home';
import { homePath } from './config/home-layout';
import { serveHomeQuestions } from './config/home-questions';
import { loadOrCreateIdentity, type Identity } from './config/identity';
import { NETWORK_STAND_INS_ENV, networkStandIns } from './config/network-stand-ins';
import { OwnerValues } from './config/owner-values';
import { KeyDestinations } from './config/key-destinations';
import { FileSecretStore } from './config/secrets';
import { SettingsFile } from './config/settings-file';
import { Engines } from './engines/engines';
import { Fleet } from './fleet/fleet';
import { rigSummary, rigUsage } from './fleet/rig-figures';
import { wireFleet } from './fleet/wire';
import type { HubStatus } from './serving/hub-status';
import { AgentLog } from './base/log';
import { AgentMetrics } from './metrics/agent-metrics';
import { wireMetrics } from './metrics/wire';
import { Owner } from './owner/owner';
import { Serving } from './serving/serving';
import { APP_VERSION } from './base/version';

/** The app's version (package.json, src/core/base/version.ts). */
export const AGENT_VERSION = APP_VERSION;

export interface AgentEvents {
  state: [AgentSnapshot];
  bridge: [BridgeEvent];
  /** A connection to the hub ended: why, and its stable code. */
  disconnected: [string, LinkReasonCode];
}

/** Prometheus metrics on the features' parts (`run --metrics`), fed by their events. */
function buildMetrics(p: { identity: Identity; values: OwnerValues; engines: Engines; accounting: Accounting; serving: Serving }): AgentMetrics {
  const { engines, accounting, serving, values } = p;
  const metrics = new AgentMetrics({
    nodeId: p.identity.nodeId,
    nodeName: () => values.nodeName(),
    version: AGENT_VERSION,
    link: () => serving.link.state,
    pause: () => engines.pause.state(),
    models: () => {
      const stats = new Map(engines.scheduler.stats().map((st) => [st.model, st]));
      return engines.registry.all().map((m) => ({
        id: m.id,
        enabled: m.enabled,
        health: engines.registry.healthOf(m.id),
        inFlight: stats.get(m.id)?.inFlight ?? 0,
        queued: stats.get(m.id)?.queued ?? 0,
      }));
    },
    gpuName: (index) => engines.gpu.gpus.find((g) => g.index === index)?.model,
    knownModel: (model) => engines.registry.get(model) !== undefined,
  });
  wireMetrics(
    {
      book: engines.book,
      link: serving.link,
      ...(engines.sampler ? { sampler: engines.sampler } : {}),
      ...(accounting.ledger ? { ledger: accounting.ledger } : {}),
    },
    metrics,
  );
  return metrics;
}

export class Agent extends EventEmitter<AgentEvents> implements BridgeBackend {
  // ---- public, read-only: what a host reads. Everything else, the request book and the ledger included,
  //      is seen through the bridge (invoke/subscribe) ----
  readonly settings: SettingsFile;
  /** Changes held for the owner's approval: hosts show them (the desktop dialog, the terminal) and decide. */
  readonly approvals: Owner['approvals'];
  /** The one alert list (link down, key refused, engine down, auto-paused, hub notice); transports subscribe. */
  readonly alerts: Owner['alerts'];
  /** Prometheus metrics (AgentOptions.metrics): what `/metrics` serves. */
  readonly metrics?: AgentMetrics;
  /** Other rigs this console reads, and this rig's read-only fleet API (served by the console server). */
  readonly fleet: Fleet;

  private readonly log: AgentLog;
  private readonly values: OwnerValues;
  private readonly life: Lifecycle;
  private readonly engines: Engines;
  private readonly accounting: Accounting;
  private readonly serving: Serving;
  private readonly owner: Owner;
  private readonly bridge: Bridge;
  /** The home folder (where other programs ask their questions). */
  private readonly home: string;

  private constructor(
    opts: AgentOptions,
    config: ProviderConfig,
    readonly identity: Identity,
  ) {
    super();
    const { home } = opts;
    this.home = home;
    const env = opts.env ?? process.env;
    const log = (this.log = opts.log ?? new AgentLog({ file: homePath(home, 'log'), console: false }));
    this.settings = SettingsFile.in(home);
    const values = (this.values = new OwnerValues(
      config,
      this.settings,
      opts.secrets ?? new FileSecretStore(home),
      env,
      networkStandIns(env),
      new KeyDestinations(home),
    ));
    const life = (this.life = new Lifecycle(log.child('agent')));
    // Registered first, so it stops last: every other part's last lines are in the file.
    life.add({
      name: 'log',
      start: () => log.child('agent').info(`node ${identity.nodeId.slice(0, 16)}… (${values.nodeName()}) starting; hub ${this.serving.link.state.hubUrl}`),
      stop: () => log.flush(),
    });
    // A step of the wall clock is said once; no duration or rate reads it (base/clock.ts).
    const clockWatch = new WallClockWatch(log.child('clock'));
    life.add({ name: 'clock', start: () => clockWatch.start(), stop: () => clockWatch.stop() });
    // Ports upward: a lower feature tells what happened; the feature above it acts (bound once all are built).
    const changed = (): void => this.bridge.snapshots.changed();
    this.engines = new Engines({
      config,
      settings: this.settings,
      home,
      env,
      log,
      life,
      ...(opts.discovery !== undefined ? { discovery: opts.discovery } : {}),
      gpu: opts.gpu ?? true,
      announce: () => this.serving.announce(),
      modelHealth: () => this.serving.modelHealth(),
      changed,
    });
    this.accounting = new Accounting({ home, owner: values, engines: this.engines, log, life, changed });
    this.serving = new Serving({
      home,
      identity,
      owner: values,
      engines: this.engines,
      accounting: this.accounting,
      version: AGENT_VERSION,
      log,
      life,
      changed,
      disconnected: (reason, code) => this.emit('disconnected', reason, code),
    });
    const event = (e: BridgeEvent): boolean => this.emit('bridge', e);
    const features = { engines: this.engines, accounting: this.accounting, serving: this.serving };
    this.owner = new Owner({ home, values, ...features, mode: opts.mode ?? 'headless', log, life, event, changed });
    // The read-outs: Prometheus metrics and the fleet (other rigs, and this rig's API), on the features.
    if (opts.metrics) this.metrics = buildMetrics({ identity, values, ...features });
    const metrics = this.metrics;
    const ledger = this.accounting.ledger ? { ledger: this.accounting.ledger } : {};
    this.fleet = new Fleet({
      home,
      secrets: values.secrets,
      log: log.child('fleet'),
      summary: (access) =>
        rigSummary(
          { snapshot: () => this.bridge.snapshot(), latestSample: () => this.engines.latestSample(), ...ledger, alerts: () => this.owner.alerts.list() },
          access,
        ),
      usage: () =>
        rigUsage({
          nodeId: identity.nodeId,
          nodeName: values.nodeName(),
          ...ledger,
          platform: () => this.accounting.earnings.stats.get(),
          providerKey: values.providerKey(),
        }),
      ...(metrics ? { metrics: () => metrics.text() } : {}),
    });
    wireFleet(this.fleet.reader, this.owner.alerts, event);
    life.add({ name: 'fleet reader', start: () => this.fleet.reader.start(), stop: () => this.fleet.reader.stop() });
    this.bridge = new Bridge({
      home,
      mode: opts.mode ?? 'headless',
      version: AGENT_VERSION,
      identity,
      values,
      ...features,
      owner: this.owner,
      fleet: this.fleet,
      log,
      life,
      event,
      state: (snapshot) => this.emit('state', snapshot),
      listening: () => this.listenerCount('bridge') > 0,
      watched: () => this.listenerCount('state') + this.listenerCount('bridge') > 0,
    });
    this.approvals = this.owner.approvals;
    this.alerts = this.owner.alerts;
  }

  static async create(opts: AgentOptions): Promise<Agent> {
    const tightened = ensureHome(opts.home);
    const env = opts.env ?? process.env;
    const config = loadConfig(opts.configPath ?? homePath(opts.home, 'config'), env);
    const identity = loadOrCreateIdentity(opts.home, env);
    const agent = new Agent(opts, config, identity);
    const l = agent.log.child('agent');
    agent.log.addSecrets([agent.values.providerKey(), config.apiKey, ...agent.fleet.rigTokens()]);
    for (const w of config.warnings) l.info(w);
    for (const n of identity.notes) l.info(n);
    for (const s of agent.values.standIns.active)
      l.warn(`${NETWORK_STAND_INS_ENV} (tests only): ${s.network} is served by ${s.hubUrl} and ${s.serviceUrl} on this machine`);
    if (tightened.length) l.warn(`These files were readable by other users; they are now private (0600/0700): ${tightened.join(', ')}`);
    return agent;
  }

  /** Starts every part, in the order the features registered them. */
  start(): Promise<void> {
    return this.life.start();
  }

  /** Stops every part, in reverse; a part that fails to stop is logged and the rest still stop. */
  stop(): Promise<void> {
    return this.life.stop();
  }

  /**
   * The last step of a stop that passed its deadline, before the host exits: the ledger writes the rows it
   * holds now, synchronously (its own close, idempotent), so what the hub was told is kept even then.
   */
  closeLedgerNow(): void {
    this.accounting.ledger?.close();
  }

  // ---- bridge ----
  invoke(channel: string, args: unknown): Promise<unknown> {
    return this.bridge.handlers.invoke(channel, args);
  }

  subscribe(cb: (event: BridgeEvent) => void): () => void {
    this.on('bridge', cb);
    return () => {
      this.off('bridge', cb);
    };
  }

  snapshot(): AgentSnapshot {
    return this.bridge.snapshot();
  }

  /** The self-check's inputs to the verdict now (traffic since the link came up, the disk, context windows): `doctor` asks for them. */
  selfCheck(): MachineChecks {
    return this.bridge.selfCheck();
  }

  /** The verified release file the owner chose to install (desktop), once no request needs it: the host installs it after stop(). */
  chosenUpdate(): { version: string; file: string } | undefined {
    return this.owner.updates.chosenInstall();
  }

  /** Resolves once no request is in flight, with how many were when asked (`swan-provider update` waits for it). */
  whenIdle(): Promise<number> {
    const held = this.engines.scheduler.inFlight();
    return this.engines.scheduler.drained().then(() => held);
  }

  /**
   * Answers the questions other programs ask of the agent in this home (config/home-questions.ts): whether one
   * runs, `doctor`'s self-check, whether it is idle (`update`) and, with `link`, a new console link. Both hosts
   * call it (the CLI's `run`, the desktop app); returns the function that stops answering.
   */
  answerHomeQuestions(link: { newUrl: () => string; printUrl?: (url: string) => void } | undefined = undefined): () => void {
    return serveHomeQuestions(this.home, {
      ...(link ? { newUrl: link.newUrl } : {}),
      ...(link?.printUrl ? { printUrl: link.printUrl } : {}),
      selfCheck: () => this.selfCheck(),
      idle: () => this.whenIdle(),
    });
  }

  /** The hub connection and the relay as plain data, for tools and tests (serving/hub-status.ts). */
  hubStatus(): HubStatus {
    return this.serving.status();
  }
}
