// What the console and the hosts see of the agent: the snapshot (built from the features' parts, sent
// coalesced), the live events (requests per turn, GPU samples, log lines, notices) and the bridge verbs.
// Built last, on every feature; the read-outs beside it (Prometheus metrics, the fleet API) are the root's.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { BridgeEvent } from '../../shared/bridge/events';
import type { Lifecycle } from '../base/lifecycle';
import type { Identity } from '../config/identity';
import type { OwnerValues } from '../config/owner-values';
import type { Fleet } from '../fleet/fleet';
import type { AgentLog } from '../base/log';
import type { Accounting } from '../accounting/accounting';
import type { Engines } from '../engines/engines';
import type { Owner } from '../owner/owner';
import type { Serving } from '../serving/serving';
import { BridgeHandlers } from './handlers';
import { RequestEvents } from './request-events';
import { MachineCheckReader } from './machine-checks';
import type { MachineChecks } from './verdict';
import { buildSnapshot } from './snapshot';
import { SnapshotEvents } from './snapshot-events';

export interface BridgeDeps {
  home: string;
  mode: 'desktop' | 'headless';
  version: string;
  identity: Identity;
  values: OwnerValues;
  engines: Engines;
  accounting: Accounting;
  serving: Serving;
  owner: Owner;
  /** Other rigs this console reads (the fleet verbs); built at the root. */
  fleet: Fleet;
  log: AgentLog;
  life: Lifecycle;
  /** A console event to the bridge's subscribers. */
  event: (e: BridgeEvent) => void;
  /** A snapshot to the host's `state` listeners. */
  state: (snapshot: AgentSnapshot) => void;
  /** Whether anyone subscribed to the bridge (per-chunk events are not built otherwise). */
  listening: () => boolean;
  /** Whether anyone hears snapshots at all (the bridge or the host). */
  watched: () => boolean;
}

export class Bridge {
  readonly handlers: BridgeHandlers;
  readonly snapshots: SnapshotEvents;
  /** The book's events as the bridge gets them (flush() sends what waits for the turn). */
  private readonly requestEvents: RequestEvents;
  /** Whether a key was configured when the agent was built: such an owner skips onboarding. */
  private readonly keyAtStart: boolean;
  /** The self-check's inputs to the verdict (the disk read at most once a minute). */
  private readonly machineChecks = new MachineCheckReader();

  constructor(private readonly d: BridgeDeps) {
    const { engines, accounting, serving, values, log } = d;
    this.keyAtStart = values.providerKey() !== '';
    this.snapshots = new SnapshotEvents(
      () => this.snapshot(),
      (snapshot) => {
        d.state(snapshot);
        d.event({ type: 'snapshot', snapshot });
      },
      d.watched,
    );
    // Per-chunk book events reach the bridge coalesced per event-loop turn, and not at all unheard.
    this.requestEvents = new RequestEvents(d.event, d.listening);
    engines.book.on('update', (request) => this.requestEvents.update(request));
    engines.book.on('text', (id, delta) => this.requestEvents.text(id, delta));
    engines.sampler?.on('sample', (sample) => d.event({ type: 'gpu.sample', sample }));
    log.on('entry', (entry) => d.event({ type: 'log', entry }));
    // A full or read-only disk (the ledger's or the log's) is in the verdict: it is seen when it starts and ends.
    log.on('file', () => this.snapshots.changed());
    accounting.ledger?.on('health', () => this.snapshots.changed());
    serving.notices.on('notice', (notice) => {
      d.event({ type: 'notice', notice });
      // The verdict reads the notices (reputation, withheld traffic), and the price list: both re-decide it.
      this.snapshots.changed();
    });
    accounting.earnings.rates.cache.on('change', () => this.snapshots.changed());
    this.handlers = new BridgeHandlers({
      mode: d.mode,
      values,
      engines,
      accounting,
      serving,
      owner: d.owner,
      fleet: d.fleet,
      log,
      snapshot: () => this.snapshot(),
      changed: () => this.snapshots.changed(),
      requestText: (id) => {
        this.requestEvents.flush();
        return engines.book.text(id);
      },
    });
    d.life.add({ name: 'snapshots', start: () => this.snapshots.changed(), stop: () => this.snapshots.close() });
  }

  /** The console's one picture of the agent (snapshot.ts). */
  snapshot(): AgentSnapshot {
    const { engines, accounting, serving, values, identity } = this.d;
    return buildSnapshot({
      version: this.d.version,
      identity,
      config: values.config,
      settings: values.settings,
      link: serving.link,
      pause: engines.pause,
      scheduler: engines.scheduler,
      registry: engines.registry,
      ...(accounting.ledger ? { ledger: accounting.ledger } : {}),
      earnings: accounting.earnings,
      gateway: serving.gateway,
      providerGate: serving.providerGate,
      catalogue: accounting.catalogue,
      gpu: engines.gpu,
      engines: engines.models.engineList(),
      nodeName: values.nodeName(),
      hasKey: values.providerKey() !== '',
      keyAtStart: this.keyAtStart,
      discovery: engines.autoDiscovery,
      running: this.d.life.isRunning,
      hubView: serving.hubView.view(),
      weights: serving.weights.view(),
      notices: serving.notices.list(),
      logFileProblem: this.d.log.fileProblem(),
      withdrawals: engines.selfHeal.withdrawals(),
      gpuHolds: engines.gpuHolds,
      checks: this.selfCheck(),
    });
  }

  /** The self-check's inputs to the verdict as they read now (the snapshot's, and what `doctor` asks a running agent). */
  selfCheck(): MachineChecks {
    const { engines, serving } = this.d;
    return this.machineChecks.read({
      home: this.d.home,
      announced: engines.announced(),
      contexts: engines.contexts,
      link: serving.link.state,
      hubRequests: serving.requestMetrics.snapshot().total_requests,
    });
  }
}
