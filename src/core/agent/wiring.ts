// Which part's events feed which other part: the Agent's connections, in one place. Each function is
// one concern; the Agent calls them once, after constructing the parts (src/core/agent.ts).
import type { BridgeEvent } from '../../shared/bridge/events';
import type { EngineInfo, GpuSample, LinkReasonCode, PauseState } from '../../shared/types';
import type { AlertList } from '../alerts/alert-list';
import { noticesFromEmitter } from '../alerts/notice-source';
import { watchForAlerts } from '../alerts/watch';
import type { WebhookTransport } from '../alerts/webhook';
import type { Identity } from '../config/identity';
import type { ContextLengths } from '../engine/context-length';
import type { EngineDiscovery } from '../engine/discovery';
import type { CapacityChange, DeepCheckState, HealthChange, HealthMonitor } from '../engine/health';
import type { MinuteHistory } from '../gpu/minute-history';
import type { GpuSampler } from '../gpu/sampler';
import type { HubLink } from '../hub/link';
import type { NoticeBook } from '../hub/notices';
import type { ProviderGate } from '../hub/provider-status';
import type { RequestMetrics } from '../hub/request-metrics';
import { POLICY } from '../inference/purpose';
import type { Log } from '../log';
import { out } from '../protocol/messages';
import type { RequestBook } from '../requests';
import { engineSlots } from '../scheduler/capacity';
import type { PauseController } from '../scheduler/pause';
import type { Scheduler } from '../scheduler/scheduler';
import type { EarningsService } from './earnings';
import type { Ledger } from '../ledger/ledger';
import type { LedgerBatch } from './ledger-batch';
import type { ModelSync } from './model-sync';
import type { ModelRegistry } from '../models/registry';
import { RequestEvents } from './request-events';
import type { RequestLines } from './request-log';

/** Where the wiring sends what it hears: the Agent's own outputs. */
export interface AgentOutlets {
  /** A console event (bridge subscribers). */
  bridge: (event: BridgeEvent) => void;
  /** Whether anyone subscribed to the bridge (per-chunk events are not built otherwise). */
  listening: () => boolean;
  /** A connection to the hub ended (the Agent's typed `disconnected` event). */
  disconnected: (reason: string, code: LinkReasonCode) => void;
  /** Coalesced: at most one snapshot per 100 ms. */
  snapshot: () => void;
  /** Re-register when the announced set changed, and tell the console. */
  announce: () => void;
}

/** Engines: health, capacity and discovery feed the model set; the hub hears model health at once. */
export function wireEngines(
  p: { health: HealthMonitor; discovery: EngineDiscovery; contexts: ContextLengths; registry: ModelRegistry; scheduler: Scheduler; pause: PauseController; link: HubLink; identity: Identity; models: ModelSync; log: Log },
  o: AgentOutlets,
): void {
  const l = p.log.child('agent');
  p.contexts.on('change', () => o.announce());
  p.health.on('capacity', (c: CapacityChange) => {
    p.registry.setEndpointCapacity(c.url, engineSlots(c.capacity, c.load));
    p.models.rebuild();
  });
  p.health.on('change', (c: HealthChange) => {
    if (c.health === 'healthy') p.models.refreshContexts(true);
    p.registry.setEndpointHealth(c.url, c.health, c.error, c.condition);
    // An engine back after a restart: discovery re-reads its models now rather than on its next round.
    if (c.health === 'healthy' && !p.models.discoverySees(c.url)) void p.models.rescan();
    // An engine that refuses our key still gets requests when nothing else serves the model, so clients
    // learn "engine rejected the provider's key" (502) rather than a vague "unavailable"; the hub sees unhealthy.
    p.scheduler.setEndpointHealth(c.url, c.condition === 'key_rejected' ? 'degraded' : c.health);
    l.info(`engine ${c.url} is ${c.health}${c.error ? `: ${c.error}` : ''}`);
    if (!p.pause.state().paused) p.link.sendControl(out.modelHealth(p.identity.nodeId, p.registry.healthMap()));
    o.snapshot();
  });
  // A deep check's answer shows per model; a model the engine does not serve there is unhealthy there (the hub hears it).
  p.health.on('deep', ({ url, state }: { url: string; state: DeepCheckState }) => {
    const { model, ...check } = state;
    if (p.registry.setDeepCheck(url, model, check) && !p.pause.state().paused) p.link.sendControl(out.modelHealth(p.identity.nodeId, p.registry.healthMap()));
    o.snapshot();
  });
  p.discovery.on('change', (engines: EngineInfo[]) => p.models.setEngines(engines));
}

/** Serving state: the link, pause and scheduler changes reach the console (and the hub, for pause); the
 *  provider status's earnings flag reaches the ledger each time the platform is asked. */
export function wireServing(p: { link: HubLink; pause: PauseController; scheduler: Scheduler; providerGate: ProviderGate; ledger?: Ledger; log: Log }, o: AgentOutlets): void {
  const l = p.log.child('agent');
  p.link.on('state', (st) => {
    o.snapshot();
    if (st.state === 'connected') l.info('connected to the hub and registered');
  });
  p.link.on('disconnected', (reason, code) => o.disconnected(reason, code));
  p.pause.on('change', (s: PauseState) => {
    l.info(s.paused ? `serving paused: ${s.reason ?? s.cause}` : 'serving resumed');
    o.announce();
  });
  p.scheduler.on('change', () => o.snapshot());
  p.providerGate.on('change', (v) => {
    if (v.earningsEnabled !== undefined && v.earningsEnabled !== p.ledger?.isEarningsEnabled()) p.ledger?.setEarningsEnabled(v.earningsEnabled);
    o.snapshot();
  });
}

/** Requests: each finished one is earned, queued for the ledger, counted for the heartbeat and logged.
 *  Returns the book's events as the bridge gets them (RequestEvents: flush() sends what waits for the turn). */
export function wireRequests(
  p: { book: RequestBook; earnings: EarningsService; ledgerBatch: LedgerBatch; requestMetrics: RequestMetrics; requestLines: RequestLines; ledger?: Ledger },
  o: AgentOutlets,
): RequestEvents {
  // Per-chunk book events reach the bridge coalesced per event-loop turn, and not at all unheard.
  const requestEvents = new RequestEvents(o.bridge, o.listening);
  p.book.on('update', (request) => {
    p.earnings.onRequestUpdate(request);
    requestEvents.update(request);
  });
  p.book.on('text', (id, delta) => requestEvents.text(id, delta));
  p.book.on('finished', (record, view) => {
    p.earnings.onFinished(record);
    // The owner's own test prompt is not usage: not counted today, not in the ledger (it stays in Requests).
    if (view.purpose !== 'try') p.ledgerBatch.queue(record);
    // The amount its row is written with, beside the request in the console.
    if (p.ledger) p.book.setEarnings(record.requestId, p.ledger.earningOf(record));
    // The heartbeat's request figures are the hub's: its purpose's row says whether a request counts.
    if (view.purpose ? POLICY[view.purpose].heartbeat : record.source === 'hub') p.requestMetrics.record(record);
    // After the ledger's queue: the lines of one turn are written after its finals leave (request-log.ts).
    p.requestLines.finished(record);
    o.snapshot();
  });
  return requestEvents;
}

/** The console's live feeds: GPU samples (also kept per minute and for energy), log lines, hub notices. */
export function wireFeeds(p: { sampler?: GpuSampler; gpuHistory?: MinuteHistory; earnings: EarningsService; log: Log; notices: NoticeBook }, o: AgentOutlets): void {
  p.sampler?.on('sample', (sample: GpuSample) => {
    p.earnings.onSample(sample);
    p.gpuHistory?.add(sample);
    o.bridge({ type: 'gpu.sample', sample });
  });
  p.log.on('entry', (entry) => o.bridge({ type: 'log', entry }));
  p.notices.on('notice', (notice) => o.bridge({ type: 'notice', notice }));
}

/** Alerts: raised from the link, health, pause, provider status and notices; logged, sent to the webhook and the console. */
export function wireAlerts(
  p: { link: HubLink; health: HealthMonitor; pause: PauseController; providerGate: ProviderGate; notices: NoticeBook; alerts: AlertList; webhook: WebhookTransport; log: Log },
  o: AgentOutlets,
): void {
  watchForAlerts({ link: p.link, health: p.health, pause: p.pause, providerStatus: p.providerGate, notices: noticesFromEmitter(p.notices) }, p.alerts);
  const l = p.log.child('alerts');
  p.alerts.on('alert', (alert) => {
    l.warn(`${alert.title}: ${alert.text}`);
    p.webhook.handle(alert);
    o.bridge({ type: 'alert', alert });
  });
}
