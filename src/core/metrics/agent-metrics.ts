// The agent in Prometheus' terms (prom-client): counters and histograms fed by the agent's own events
// (a finished request from the request book, a GPU sample, a hub (re)registration), gauges read at
// scrape time from the parts that own them. Nothing here runs per chunk: the relay path is untouched,
// and a scrape reads only in-memory state (no ledger query).
//
// Every series carries node_id and node_name (the registry's default labels, applied when the text is
// written, so a renamed node shows its new name at the next scrape). Cardinality is bounded: labels are
// source, model (only models this machine knows, at most MAX_MODELS of them; the rest are "other"),
// outcome, error kind, GPU index — never a request id, prompt or key. The names are in metric-names.ts;
// docs/monitoring.md is the reference and grafana/ the dashboard.
import client from 'prom-client';
import type { GpuSample, LinkState, LinkStatus, ModelHealth, PauseState, RequestStatus, RequestView, UsageRecord } from '../../shared/types';
import { POLICY } from '../inference/purpose';
import { LabelCap, OTHER_LABEL } from './label-cap';
import { M } from './metric-names';

/** Models with a label of their own; requests for any further model are counted as model="other". */
export const MAX_MODELS = 32;

const LINK_STATES: readonly LinkState[] = ['idle', 'connecting', 'registering', 'connected', 'backoff', 'auth_failed', 'stopped'];
const HEALTH: readonly ModelHealth[] = ['healthy', 'degraded', 'unhealthy'];

/** Who sent a request: the network, the owner's own apps, or the agent itself (warmup, verify, benchmark). */
export type MetricSource = 'hub' | 'local' | 'internal';

/** Why a request failed at the engine, from its status code and error text (a small fixed set). */
export type EngineErrorKind = 'key_rejected' | 'timeout' | 'connection' | 'engine_4xx' | 'engine_5xx' | 'other';

export const ENGINE_ERROR_KINDS: readonly EngineErrorKind[] = ['key_rejected', 'timeout', 'connection', 'engine_4xx', 'engine_5xx', 'other'];

/** Every source and every finished outcome a request series can have (seeded at 0). */
const SOURCES: readonly MetricSource[] = ['hub', 'local', 'internal'];
const OUTCOMES: readonly Exclude<RequestStatus, 'queued' | 'running'>[] = ['ok', 'error', 'cancelled', 'rejected'];

export function engineErrorKind(r: Pick<UsageRecord, 'statusCode' | 'error'>): EngineErrorKind {
  const text = r.error ?? '';
  if (/rejected the provider's key/i.test(text)) return 'key_rejected';
  if (r.statusCode === 504 || /timed? ?out|timeout/i.test(text)) return 'timeout';
  if (/ECONNREFUSED|ECONNRESET|EPIPE|EHOSTUNREACH|ENOTFOUND|socket hang up|fetch failed|connection (refused|reset|closed)|unreachable/i.test(text))
    return 'connection';
  const code = r.statusCode ?? 0;
  if (code >= 400 && code < 500) return 'engine_4xx';
  if (code >= 500 && code < 600) return 'engine_5xx';
  return 'other';
}

export function metricSource(r: Pick<UsageRecord, 'source'>, view: Pick<RequestView, 'purpose'> = {}): MetricSource {
  return view.purpose && !POLICY[view.purpose].client ? 'internal' : r.source;
}

/** What the gauges read at scrape time. */
export interface MetricsSources {
  nodeId: string;
  nodeName: () => string;
  version: string;
  link: () => LinkStatus;
  pause: () => PauseState;
  /** Each known model: whether it is offered, its health, and the scheduler's figures. */
  models: () => Array<{ id: string; enabled: boolean; health: ModelHealth; inFlight: number; queued: number }>;
  /** GPU names by index (the detected inventory). */
  gpuName: (index: number) => string | undefined;
  /** Whether the model is one this machine serves or has served (others are labelled "other"). */
  knownModel: (model: string) => boolean;
  /** Process metrics (CPU, memory, event loop, GC) beside the agent's own. */
  processMetrics?: boolean;
  now?: () => number;
}

const seconds = (ms: number): number => ms / 1000;

export class AgentMetrics {
  readonly registry = new client.Registry();
  private readonly models = new LabelCap(MAX_MODELS);
  private readonly startedAt: number;
  private readonly now: () => number;
  private registrations = 0;
  /** Histogram series (source|model) that exist: zero() on one of them would wipe what it counted. */
  private readonly timed = new Set<string>();

  private readonly requests: client.Counter<'source' | 'model' | 'outcome'>;
  private readonly tokens: client.Counter<'source' | 'model' | 'direction'>;
  private readonly earnings: client.Counter<'model'>;
  private readonly engineErrors: client.Counter<'model' | 'kind'>;
  private readonly reconnects: client.Counter;
  private readonly disconnects: client.Counter<'code'>;
  private readonly ttft: client.Histogram<'source' | 'model'>;
  private readonly latency: client.Histogram<'source' | 'model'>;
  private readonly speed: client.Histogram<'source' | 'model'>;
  private readonly added: client.Histogram<'source' | 'model'>;
  private readonly gpu: Record<'util' | 'vramUsed' | 'vramTotal' | 'temp' | 'power' | 'powerLimit', client.Gauge<'gpu' | 'gpu_name'>>;
  private readonly gpuAvailable: client.Gauge;

  constructor(private readonly s: MetricsSources) {
    this.now = s.now ?? Date.now;
    this.startedAt = this.now();
    const registers = [this.registry];
    this.registry.setDefaultLabels({ node_id: s.nodeId, node_name: s.nodeName() });

    this.requests = new client.Counter({
      name: M.requests,
      help: 'Finished requests by source (hub, local, internal), model and outcome (ok, error, cancelled, rejected).',
      labelNames: ['source', 'model', 'outcome'],
      registers,
    });
    this.tokens = new client.Counter({
      name: M.tokens,
      help: 'Tokens the engine reported, by direction (in: prompt, out: generated).',
      labelNames: ['source', 'model', 'direction'],
      registers,
    });
    this.earnings = new client.Counter({
      name: M.earnings,
      help: 'Earnings of hub requests as the ledger prices them, USD.',
      labelNames: ['model'],
      registers,
    });
    this.engineErrors = new client.Counter({
      name: M.engineErrors,
      help: 'Requests that failed at the engine, by kind.',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.reconnects = new client.Counter({ name: M.reconnects, help: 'Registrations with the hub after a lost connection.', registers });
    this.disconnects = new client.Counter({ name: M.disconnects, help: 'Connections to the hub that ended, by reason code.', labelNames: ['code'], registers });

    this.ttft = new client.Histogram({
      name: M.ttft,
      help: 'Time from a request reaching the agent to its first token.',
      labelNames: ['source', 'model'],
      buckets: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30],
      registers,
    });
    this.latency = new client.Histogram({
      name: M.latency,
      help: 'Time from a request reaching the agent to its end.',
      labelNames: ['source', 'model'],
      buckets: [0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 20, 30, 60, 120, 300],
      registers,
    });
    this.speed = new client.Histogram({
      name: M.speed,
      help: 'Generation speed of successful requests (tokens out per second after the first token).',
      labelNames: ['source', 'model'],
      buckets: [1, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 1000],
      registers,
    });
    this.added = new client.Histogram({
      name: M.added,
      help: 'What the agent adds before the engine: time from a request reaching the agent to its call to the engine (admission and queue).',
      labelNames: ['source', 'model'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });

    const gpuGauge = (name: string, help: string) => new client.Gauge({ name, help, labelNames: ['gpu', 'gpu_name'], registers });
    this.gpu = {
      util: gpuGauge(M.gpuUtil, 'GPU utilisation, 0..1.'),
      vramUsed: gpuGauge(M.gpuVramUsed, 'GPU memory in use.'),
      vramTotal: gpuGauge(M.gpuVramTotal, 'GPU memory in total.'),
      temp: gpuGauge(M.gpuTemp, 'GPU temperature.'),
      power: gpuGauge(M.gpuPower, 'GPU power draw.'),
      powerLimit: gpuGauge(M.gpuPowerLimit, 'GPU power limit.'),
    };
    this.gpuAvailable = new client.Gauge({ name: M.gpuAvailable, help: '1 while the GPU tool answers; 0 when it is missing, hung or restarting.', registers });

    // Gauges of state the parts own, read when scraped.
    // collect() runs with `this` bound to the gauge: what it needs of this class is captured here.
    const modelLabel = (id: string): string => this.modelLabel(id);
    const uptime = (): number => seconds(this.now() - this.startedAt);
    new client.Gauge({
      name: M.info,
      help: 'Agent version (the value is always 1).',
      labelNames: ['version'],
      registers,
      collect() {
        this.reset();
        this.set({ version: s.version }, 1);
      },
    });
    new client.Gauge({
      name: M.uptime,
      help: 'Seconds since the agent started.',
      registers,
      collect() {
        this.set(uptime());
      },
    });
    new client.Gauge({
      name: M.connected,
      help: '1 when registered with the hub and serving.',
      registers,
      collect() {
        this.set(s.link().state === 'connected' ? 1 : 0);
      },
    });
    new client.Gauge({
      name: M.linkState,
      help: 'Hub link state: 1 for the current state, 0 for the others.',
      labelNames: ['state'],
      registers,
      collect() {
        const now = s.link().state;
        for (const st of LINK_STATES) this.set({ state: st }, st === now ? 1 : 0);
      },
    });
    new client.Gauge({
      name: M.paused,
      help: '1 while serving is paused (by the owner, a busy GPU or a schedule).',
      registers,
      collect() {
        this.set(s.pause().paused ? 1 : 0);
      },
    });
    const perModel = (name: string, help: string, pick: (m: ReturnType<MetricsSources['models']>[number]) => number) =>
      new client.Gauge({
        name,
        help,
        labelNames: ['model'],
        registers,
        collect() {
          this.reset();
          for (const m of s.models()) this.set({ model: modelLabel(m.id) }, pick(m));
        },
      });
    perModel(M.modelEnabled, '1 when the model is offered to the network.', (m) => (m.enabled ? 1 : 0));
    perModel(M.inFlight, 'Requests running on the model now.', (m) => m.inFlight);
    perModel(M.queued, 'Requests waiting for the model.', (m) => m.queued);
    new client.Gauge({
      name: M.modelHealth,
      help: 'Model health: 1 for the current health, 0 for the others.',
      labelNames: ['model', 'health'],
      registers,
      collect() {
        this.reset();
        for (const m of s.models()) for (const h of HEALTH) this.set({ model: modelLabel(m.id), health: h }, m.health === h ? 1 : 0);
      },
    });

    if (s.processMetrics !== false) client.collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 50 });
  }

  /** The label of a model: its id while it is one this machine knows (and the cap allows), else "other". */
  private modelLabel(model: string): string {
    return this.s.knownModel(model) ? this.models.of(model) : OTHER_LABEL;
  }

  /** Series of every served model start at 0, so a rate over the first requests is right (a counter
   * first seen at 5 reads as 0 new requests). */
  seedModels(models: string[]): void {
    for (const id of models) {
      const model = this.modelLabel(id);
      // Every outcome and engine-error kind, not only ok/error: the first cancelled or rejected request, and the
      // first engine error of a kind, would otherwise be invisible to rate() and increase().
      for (const source of SOURCES) for (const outcome of OUTCOMES) this.requests.inc({ source, model, outcome }, 0);
      for (const kind of ENGINE_ERROR_KINDS) this.engineErrors.inc({ model, kind }, 0);
      for (const source of ['hub', 'local'] as const) {
        this.tokens.inc({ source, model, direction: 'in' }, 0);
        this.tokens.inc({ source, model, direction: 'out' }, 0);
        // zero() makes every bucket of the series exist at 0 (histogram_quantile over a rate needs both ends).
        if (!this.timed.has(`${source}|${model}`)) {
          this.timed.add(`${source}|${model}`);
          for (const h of [this.latency, this.ttft, this.speed, this.added]) h.zero({ source, model });
        }
      }
      this.earnings.inc({ model }, 0);
    }
  }

  /** A request ended (the request book's `finished`). */
  onFinished(record: UsageRecord, view: Pick<RequestView, 'admittedAt' | 'startedAt' | 'purpose'>, earned: number): void {
    const source = metricSource(record, view);
    const model = this.modelLabel(record.model);
    const labels = { source, model };
    this.requests.inc({ ...labels, outcome: record.status });
    if (record.tokensIn > 0) this.tokens.inc({ ...labels, direction: 'in' }, record.tokensIn);
    if (record.tokensOut > 0) this.tokens.inc({ ...labels, direction: 'out' }, record.tokensOut);
    if (earned > 0) this.earnings.inc({ model }, earned);
    if (record.status === 'error') this.engineErrors.inc({ model, kind: engineErrorKind(record) });
    // Refused and cancelled requests say nothing about speed: only served ones are timed.
    if (record.status !== 'ok') return;
    this.timed.add(`${source}|${model}`);
    this.latency.observe(labels, seconds(record.latencyMs));
    if (record.ttftMs !== null) this.ttft.observe(labels, seconds(record.ttftMs));
    if (record.tokensPerSecond !== null) this.speed.observe(labels, record.tokensPerSecond);
    if (view.admittedAt !== undefined) this.added.observe(labels, seconds(Math.max(0, view.admittedAt - view.startedAt)));
  }

  /** A GPU sample (the sampler's `sample`, about once a second). */
  onSample(sample: GpuSample): void {
    this.gpuAvailable.set(sample.available ? 1 : 0);
    for (const g of Object.values(this.gpu)) g.reset();
    if (!sample.available) return;
    for (const d of sample.devices) {
      const labels = { gpu: String(d.index), gpu_name: this.s.gpuName(d.index) ?? `gpu${d.index}` };
      const mib = 1024 * 1024;
      if (d.utilization !== null) this.gpu.util.set(labels, d.utilization);
      if (d.vramUsedMb !== null) this.gpu.vramUsed.set(labels, d.vramUsedMb * mib);
      if (d.vramTotalMb !== null) this.gpu.vramTotal.set(labels, d.vramTotalMb * mib);
      if (d.temperatureC !== null) this.gpu.temp.set(labels, d.temperatureC);
      if (d.powerW !== null) this.gpu.power.set(labels, d.powerW);
      if (d.powerLimitW !== null) this.gpu.powerLimit.set(labels, d.powerLimitW);
    }
  }

  /** The hub accepted our registration; every one after the first is a reconnect. */
  onRegistered(): void {
    this.registrations++;
    if (this.registrations > 1) this.reconnects.inc();
  }

  onDisconnected(code: string): void {
    this.disconnects.inc({ code });
  }

  /** The node's name may change in Settings: the default labels follow it. */
  private renamed(): void {
    this.registry.setDefaultLabels({ node_id: this.s.nodeId, node_name: this.s.nodeName() });
  }

  /** The exposition text (Prometheus format 0.0.4). */
  text(): Promise<string> {
    this.renamed();
    this.seedModels(this.s.models().map((m) => m.id));
    return this.registry.metrics();
  }
}
