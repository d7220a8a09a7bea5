// The console's one picture of the agent (AgentSnapshot), assembled from the parts that own each field.
import type { AgentSnapshot, HubNoticeView } from '../../shared/views/snapshot';
import type { EngineInfo, EngineModelMeta, GpuInventory, HubViewState, WeightsView } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { Identity } from '../config/identity';
import type { HubLink } from '../hub/link';
import type { ProviderGate } from '../hub/provider-status';
import type { Ledger } from '../ledger/ledger';
import type { Catalogue } from '../platform/catalogue';
import { endpointLimit } from '../scheduler/capacity';
import type { PauseController } from '../scheduler/pause';
import type { Scheduler } from '../scheduler/scheduler';
import type { EarningsService } from '../accounting/earnings';
import type { GatewayLifecycle } from '../serving/gateway-lifecycle';
import type { ModelRegistry } from '../models/registry';
import type { SettingsFile } from '../config/settings-file';
import { verdictOf } from './verdict';
import { networkLabel, SIMULATED_HUB_EXTENSION } from '../../shared/networks';

export interface SnapshotSources {
  version: string;
  identity: Identity;
  config: ProviderConfig;
  settings: SettingsFile;
  link: HubLink;
  pause: PauseController;
  scheduler: Scheduler;
  registry: ModelRegistry;
  ledger?: Ledger;
  earnings: EarningsService;
  gateway: GatewayLifecycle;
  providerGate: ProviderGate;
  catalogue: Catalogue;
  gpu: GpuInventory;
  engines: EngineInfo[];
  nodeName: string;
  hasKey: boolean;
  keyAtStart: boolean;
  discovery: boolean;
  /** The agent has started and not stopped. */
  running: boolean;
  hubView?: HubViewState;
  weights?: WeightsView;
  /** The hub's notices (the verdict reads reputation and withheld traffic from them). */
  notices?: HubNoticeView[];
}

/** The window a failure rate is said over: an engine that recovered stops being blamed within it. */
export const RECENT_WINDOW_MS = 30 * 60_000;

/** Each model as catalogue matching sees it: its id, whether models.json names it, the engine's own name and report. */
export function catalogueSubjects(registry: ModelRegistry, engines: EngineInfo[]): Array<{ id: string; explicit: boolean; localName?: string; meta?: EngineModelMeta }> {
  return registry.all().map((m) => {
    const ep = m.endpoints[0];
    const name = ep?.localModel ?? m.id;
    const meta = ep ? engines.find((e) => e.url === ep.url)?.modelMeta?.[name] : undefined;
    return { id: m.id, explicit: m.fromConfig, ...(ep?.localModel ? { localName: ep.localModel } : {}), ...(meta ? { meta } : {}) };
  });
}

export function buildSnapshot(p: SnapshotSources): AgentSnapshot {
  const stats = new Map(p.scheduler.stats().map((s) => [s.model, s]));
  const s = p.settings.get();
  const today = p.ledger?.today() ?? { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
  const now = Date.now();
  const recent = p.ledger?.totals(now - RECENT_WINDOW_MS, now + 1);
  const todayEarningsReason = p.earnings.todayReason(today);
  const models = p.registry.view((model) => {
    const st = stats.get(model);
    return {
      inFlight: st?.inFlight ?? 0,
      queued: st?.queued ?? 0,
      maxConcurrent: st?.maxConcurrent ?? p.config.agent.maxConcurrentPerEndpoint,
      maxQueue: st?.maxQueue ?? p.config.agent.maxQueuePerModel,
      endpointInFlight: (url) => st?.endpoints.find((e) => e.url === url)?.inFlight ?? 0,
      endpointCap: (url) => endpointLimit(p.config.agent, p.registry.endpointCapacityOf(url)),
    };
  });
  const providerStatus = p.providerGate.view();
  const catalogue = p.catalogue.view(catalogueSubjects(p.registry, p.engines));
  const earningsEnabled = providerStatus.earningsEnabled ?? p.ledger?.isEarningsEnabled();
  const simulatedHub = p.link.state.state === 'connected' && p.link.hubExtensions.includes(SIMULATED_HUB_EXTENSION);
  return {
    version: p.version,
    nodeId: p.identity.nodeId,
    nodeName: p.nodeName,
    link: p.link.state,
    pause: p.pause.state(),
    gpu: p.gpu,
    engines: p.engines,
    models,
    today,
    ...(recent ? { recent: { requests: recent.requests, errors: recent.errors, windowMs: RECENT_WINDOW_MS } } : {}),
    ...(todayEarningsReason ? { todayEarningsReason } : {}),
    gateway: p.gateway.view(),
    hasKey: p.hasKey,
    onboarded: s.onboarded ?? p.keyAtStart,
    identity: { source: p.identity.source, file: p.identity.file, ...(p.identity.from ? { from: p.identity.from } : {}) },
    providerStatus,
    catalogue,
    discovery: p.discovery,
    ...(simulatedHub ? { simulatedHub } : {}),
    verdict: verdictOf({
      networkName: simulatedHub ? 'a simulated network (a dev hub)' : networkLabel(s.hubUrl ?? p.config.webSocketUrl),
      running: p.running,
      hasKey: p.hasKey,
      hubEnabled: p.config.enable,
      link: p.link.state,
      pause: p.pause.state(),
      providerStatus,
      models,
      catalogue,
      ...(p.hubView?.registeredModels ? { registeredModels: p.hubView.registeredModels } : {}),
      ...(earningsEnabled !== undefined ? { earningsEnabled } : {}),
      pricing: p.earnings.networkPricing(models.filter((m) => m.enabled && m.endpoints.length > 0).map((m) => m.id)),
      ...(p.notices ? { notices: p.notices } : {}),
    }),
    ...(p.hubView ? { hubView: p.hubView } : {}),
    ...(p.weights ? { weights: p.weights } : {}),
  };
}
