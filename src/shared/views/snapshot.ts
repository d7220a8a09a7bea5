// The agent's state as one object: what every page reads first, answered by `snapshot.get` and pushed
// as the `snapshot` event whenever it changes (coalesced). The hub's notices are pushed beside it.
import type { EngineInfo, GpuInventory, HubViewState, LinkStatus, ModelState, PauseState, UsageTotals, Verdict, WeightsView, GpuServingState } from '../types';
import type { EarningsZeroReason } from './usage';

export interface AgentSnapshot {
  version: string;
  nodeId: string;
  nodeName: string;
  link: LinkStatus;
  pause: PauseState;
  /** Each GPU's part in serving on a rig with several (empty with one GPU or none: the rig's pause is its switch). */
  gpuServing?: GpuServingState[];
  gpu: GpuInventory;
  engines: EngineInfo[];
  models: ModelState[];
  today: UsageTotals;
  /** The ledger over the last RECENT_WINDOW_MS: what a failure rate is said over (today's would outlive a recovery). */
  recent?: { requests: number; errors: number; windowMs: number };
  /** Why today's earnings are zero, when they are (the Today card shows it instead of a bare $0.00). */
  todayEarningsReason?: EarningsZeroReason;
  gateway: { enabled: boolean; listen: string; running: boolean; keys: number; error?: string };
  /** false until the owner has saved a provider key (drives the onboarding screen). */
  hasKey: boolean;
  onboarded: boolean;
  /** false: the default engine ports are not probed (only owner-added addresses and models.json endpoints). */
  discovery?: boolean;
  /** Serving a hub that says its network and money are simulated (the dev hub, `demo`): the console says so. */
  simulatedHub?: boolean;
  /** Where the node identity (secp256k1 key) comes from: made here, reused from the Go provider, or migrated. */
  identity?: { source: 'generated' | 'computing-provider' | 'migrated' | 'home'; file: string; from?: string };
  /** What GET {ServiceURL}/api/v1/provider/status said, and whether the agent connects because of it. */
  providerStatus?: ProviderStatusView;
  /** Whether the network's model catalogue knows each announced model (GET /api/v1/models). */
  catalogue?: CatalogueView;
  /** Serving, routed, earning — or why not and what to do (src/core/bridge/verdict.ts). */
  verdict: Verdict;
  /** The hub's view of this node from its register ack: models it did not register, upgrade advice. */
  hubView?: HubViewState;
  /** The served models' weight files: located, hashed (progress), the composite the hub is told. */
  weights?: WeightsView;
}

/**
 * The provider's standing on the platform. state: checking | ok (the agent connects) | waiting
 * (can_connect false: re-checked every minute) | invalid_key (api_key_valid false: not connecting) |
 * unreachable (the check failed: the agent connects anyway, as the Go provider does) | no_key.
 */
export interface ProviderStatusView {
  state: 'checking' | 'ok' | 'waiting' | 'invalid_key' | 'unreachable' | 'no_key';
  url: string;
  checkedAt?: number;
  nextCheckAt?: number;
  error?: string;
  providerId?: string;
  name?: string;
  status?: string;
  canConnect?: boolean;
  apiKeyValid?: boolean;
  message?: string;
  warning?: string;
  nextSteps: string[];
  step?: number;
  totalSteps?: number;
  stepLabel?: string;
  earningsEnabled?: boolean;
}

export interface CatalogueMatchView {
  /** The catalogue has this exact id: the network routes requests for it. */
  known: boolean;
  /** explicit: the id is a models.json key; engine: the engine's own name, as discovered. */
  source: 'explicit' | 'engine';
  /** The catalogue id the engine's model is (src/core/platform/catalogue.ts matchModel), when one is. */
  matchedId?: string;
  confidence?: number;
  /** What the match rests on: the id itself, the name (an alias, the slug, the same normalised name), or the engine's metadata. */
  basis?: 'id' | 'name' | 'metadata';
  /** Catalogue ids this model may be served as: the match, then others the engine's report fits (at most 3); never a mere likeness of names. */
  suggestions: string[];
}

export interface CatalogueView {
  state: 'idle' | 'ok' | 'error';
  url: string;
  fetchedAt?: number;
  error?: string;
  size: number;
  models: Record<string, CatalogueMatchView>;
}

export type NoticeSeverity = 'info' | 'warning' | 'critical';

/** A notice the hub sent (validated and clamped; see src/core/hub/notices.ts). */
export interface HubNoticeView {
  id: string;
  receivedAt: number;
  event: string;
  severity: NoticeSeverity;
  modelId?: string;
  message: string;
  details?: Record<string, string>;
}
