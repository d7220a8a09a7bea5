// The console's one picture of the agent (AgentSnapshot), assembled from the parts that own each field.
import type { AgentSnapshot, HubNoticeView } from '../../shared/views/snapshot';
import type { EngineInfo, EngineModelMeta, GpuInventory, HubViewState, WeightsView, UsageTotals } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { Identity } from '../config/identity';
import type { LogFileProblem } from '../base/log';
import type { HubLink } from '../hub/link';
import type { ProviderGate } from '../hub/provider-status';
import type { Ledger } from '../ledger/ledger';
import { LedgerUnavailableError } from '../ledger/db-errors';
import type { Catalogue } from '../platform/catalogue';
import { endpointLimit } from '../scheduler/capacity';
import type { PauseController } from '../scheduler/pause';
import type { Scheduler } from '../scheduler/scheduler';
import type { EarningsService } from '../accounting/earnings';
import type { GatewayLifecycle } from '../serving/gateway-lifecycle';
import type { ModelRegistry } from '../models/registry';
import type { SettingsFile } from '../config/settings-file';
import type { GpuHolds } from '../engines/gpu-holds';
import { verdictOf, type MachineChecks } from './verdict';
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
  /** Why the log file is not being written (a full or read-only disk), if so. */
  logFileProblem?: LogFileProblem | null;
  /** Models self-healing withdrew from the hub (engines/self-heal.ts). */
  withdrawals?: Array<{ model: string; reason: 'probe_failures' | 'error_rate'; since: number; detail: string }>;
  /** Per-GPU serving (engines/gpu-holds.ts): each GPU's state, each model's GPUs and hold. */
  gpuHolds?: Pick<GpuHolds, 'state' | 'hold' | 'placement'>;
  /** The self-check's inputs (machine-checks.ts): context windows, the home's disk, traffic since start. */
  checks?: MachineChecks;
}

/** The home's disk refusing writes, as the ledger or the log file saw it (the ledger first: it holds the records). */
function diskProblem(p: SnapshotSources): { code: 'disk_full' | 'disk_read_only'; file: string } | undefined {
  const kind = p.ledger?.health().kind;
  if (kind === 'full' || kind === 'read_only') return { code: kind === 'full' ? 'disk_full' : 'disk_read_only', file: p.ledger!.file };
  const lf = p.logFileProblem;
  if (lf && (lf.code === 'disk_full' || lf.code === 'disk_read_only')) return { code: lf.code, file: lf.file };
  return undefined;
}

/** The window a failure rate is said over: an engine that recovered stops being blamed within it. */
export const RECENT_WINDOW_MS = 30 * 60_000;

/** Each model as catalogue matching sees it: its id, whether models.json names it, the engine's own name and report. */
export function catalogueSubjects(
  registry: ModelRegistry,
  engines: EngineInfo[],
): Array<{ id: string; explicit: boolean; localName?: string; meta?: EngineModelMeta }> {
  return registry.all().map((m) => {
    const ep = m.endpoints[0];
    const name = ep?.localModel ?? m.id;
    const meta = ep ? engines.find((e) => e.url === ep.url)?.modelMeta?.[name] : undefined;
    return { id: m.id, explicit: m.fromConfig, ...(ep?.localModel ? { localName: ep.localModel } : {}), ...(meta ? { meta } : {}) };
  });
}

function recentTotals(p: SnapshotSources, now: number): UsageTotals | undefined {
  try {
    return p.ledger?.totals(now - RECENT_WINDOW_MS, now + 1);
  } catch (e) {
    if (e instanceof LedgerUnavailableError) return undefined;
    throw e;
  }
}

export function buildSnapshot(p: SnapshotSources): AgentSnapshot {
  const stats = new Map(p.scheduler.stats().map((s) => [s.model, s]));
  const s = p.settings.get();
  const today = p.ledger?.today() ?? { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
  const now = Date.now();
  // Absent (not known, never zeros) while the ledger cannot be read, or is closed once the agent stopped: the
  // snapshot, and its stopped verdict, are still said.
  const recent = recentTotals(p, now);
  const todayEarningsReason = p.earnings.todayReason(today);
  const withdrawn = new Map((p.withdrawals ?? []).map((w) => [w.model, w]));
  const viewed = p.registry.view((model) => {
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
  const gpuServing = p.gpuHolds?.state() ?? [];
  const models = viewed.map((m) => {
    const w = withdrawn.get(m.id);
    const placed =
      gpuServing.length > 0
        ? p.gpuHolds?.placement(
            m.id,
            m.endpoints.map((e) => e.url),
          )
        : undefined;
    const hold = p.gpuHolds?.hold(m.id);
    return {
      ...m,
      ...(w ? { withdrawn: { reason: w.reason, since: w.since, detail: w.detail } } : {}),
      ...(placed ? { gpus: placed } : {}),
      ...(hold ? { gpuHold: hold } : {}),
    };
  });
  const providerStatus = p.providerGate.view();
  const catalogue = p.catalogue.view(catalogueSubjects(p.registry, p.engines));
  const earningsEnabled = providerStatus.earningsEnabled ?? p.ledger?.isEarningsEnabled();
  const simulatedHub = p.link.state.state === 'connected' && p.link.hubExtensions.includes(SIMULATED_HUB_EXTENSION);
  const disk = diskProblem(p);
  return {
    version: p.version,
    nodeId: p.identity.nodeId,
    nodeName: p.nodeName,
    link: p.link.state,
    pause: p.pause.state(),
    ...(gpuServing.length > 0 ? { gpuServing } : {}),
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
      ...(disk ? { disk } : {}),
      ...(p.checks ? { checks: p.checks } : {}),
    }),
    ...(p.hubView ? { hubView: p.hubView } : {}),
    ...(p.weights ? { weights: p.weights } : {}),
  };
}
