// The console's one picture of the agent (AgentSnapshot), assembled from the parts that own each field.
import type { AgentSnapshot } from '../../shared/bridge';
import type { EngineInfo, GpuInventory } from '../../shared/types';
import type { ProviderConfig } from '../config/config';
import type { Identity } from '../config/identity';
import type { HubLink } from '../hub/link';
import type { ProviderGate } from '../hub/provider-status';
import type { Ledger } from '../ledger/ledger';
import type { Catalogue } from '../platform/catalogue';
import { endpointLimit } from '../scheduler/capacity';
import type { PauseController } from '../scheduler/pause';
import type { Scheduler } from '../scheduler/scheduler';
import type { EarningsService } from './earnings';
import type { GatewayLifecycle } from './gateway-lifecycle';
import type { ModelRegistry } from './models';
import type { SettingsFile } from './settings';

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
}

export function buildSnapshot(p: SnapshotSources): AgentSnapshot {
  const stats = new Map(p.scheduler.stats().map((s) => [s.model, s]));
  const s = p.settings.get();
  const today = p.ledger?.today() ?? { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
  const todayEarningsReason = p.earnings.todayReason(today);
  return {
    version: p.version,
    nodeId: p.identity.nodeId,
    nodeName: p.nodeName,
    link: p.link.state,
    pause: p.pause.state(),
    gpu: p.gpu,
    engines: p.engines,
    models: p.registry.view((model) => {
      const st = stats.get(model);
      return {
        inFlight: st?.inFlight ?? 0,
        queued: st?.queued ?? 0,
        maxConcurrent: st?.maxConcurrent ?? p.config.agent.maxConcurrentPerEndpoint,
        maxQueue: st?.maxQueue ?? p.config.agent.maxQueuePerModel,
        endpointInFlight: (url) => st?.endpoints.find((e) => e.url === url)?.inFlight ?? 0,
        endpointCap: (url) => endpointLimit(p.config.agent, p.registry.endpointCapacityOf(url)),
      };
    }),
    today,
    ...(todayEarningsReason ? { todayEarningsReason } : {}),
    gateway: p.gateway.view(),
    hasKey: p.hasKey,
    onboarded: s.onboarded ?? p.keyAtStart,
    identity: { source: p.identity.source, file: p.identity.file, ...(p.identity.from ? { from: p.identity.from } : {}) },
    providerStatus: p.providerGate.view(),
    catalogue: p.catalogue.view(
      p.registry.all().map((m) => ({ id: m.id, explicit: m.fromConfig, ...(m.endpoints[0]?.localModel ? { localName: m.endpoints[0].localModel } : {}) })),
    ),
    discovery: p.discovery,
  };
}
