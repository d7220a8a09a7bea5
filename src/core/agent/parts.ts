// What the Agent (src/core/agent.ts) composes, by name, and the few actions it offers on top. The bridge
// verbs (bridge-handlers.ts) pick what they use from these; the Agent hands them over privately, so none
// of these parts (the hub link above all) is a public field of the Agent.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { EngineInfo } from '../../shared/types';
import type { Fleet } from '../fleet/fleet';
import type { AgentOptions } from '../agent-options';
import type { AlertList } from '../alerts/alert-list';
import type { OwnerApprovals } from './approvals';
import type { WebhookTransport } from '../alerts/webhook';
import type { ProviderConfig } from '../config/config';
import type { NetworkStandIns } from '../config/network-stand-ins';
import type { Identity } from '../config/identity';
import type { SecretStore } from '../config/secrets';
import type { GatewayKeys } from '../gateway/keys';
import type { MinuteHistory } from '../gpu/minute-history';
import type { GpuSampler } from '../gpu/sampler';
import type { HubLink } from '../hub/link';
import type { NoticeBook } from '../hub/notices';
import type { ProviderGate } from '../hub/provider-status';
import type { InferenceRunner } from '../inference/runner';
import type { Ledger } from '../ledger/ledger';
import type { Log } from '../log';
import type { Catalogue } from '../platform/catalogue';
import type { RequestBook } from '../requests';
import type { PauseController } from '../scheduler/pause';
import type { EarningsService } from './earnings';
import type { ModelRegistry } from '../models/registry';
import type { SettingsFile } from './settings';
import type { Warmup } from './warmup';

/** Where the provider key comes from (Settings shows it). */
export type KeyStorage = 'keychain' | 'file' | 'config' | 'env' | 'none';

/** The composed parts the bridge verbs use. */
export interface AgentParts {
  readonly opts: AgentOptions;
  readonly config: ProviderConfig;
  readonly identity: Identity;
  readonly log: Log;
  readonly book: RequestBook;
  readonly registry: ModelRegistry;
  readonly pause: PauseController;
  readonly link: HubLink;
  readonly runner: InferenceRunner;
  readonly sampler?: GpuSampler;
  readonly ledger?: Ledger;
  readonly earnings: EarningsService;
  readonly settings: SettingsFile;
  readonly gatewayKeys: GatewayKeys;
  readonly secrets: SecretStore;
  readonly warmup: Warmup;
  readonly notices: NoticeBook;
  readonly providerGate: ProviderGate;
  readonly catalogue: Catalogue;
  readonly alerts: AlertList;
  readonly webhook: WebhookTransport;
  readonly gpuHistory?: MinuteHistory;
  /** Changes only the owner may allow, held until approved outside the console (approvals.ts). */
  readonly approvals: OwnerApprovals;
  /** Other rigs read by this console, and the tokens that let other consoles read this one. */
  readonly fleet: Fleet;
  /** Tests' stand-ins of the named networks: the addresses actually dialled and asked for configured ones. */
  readonly standIns: NetworkStandIns;
}

/** The Agent's own actions the bridge verbs call (settings changed, rescan, retry...). */
export interface AgentActions {
  snapshot(): AgentSnapshot;
  /** Coalesced: at most one snapshot event per 100 ms. */
  emitSnapshot(): void;
  nodeName(): string;
  providerKey(): string;
  keyStorage(): KeyStorage;
  engineList(): EngineInfo[];
  /** Probes engines now (plus `extra` URLs the owner just added) and rebuilds the model set. */
  rescanEngines(extra?: string[]): Promise<void>;
  /** Stops keeping an engine the owner removed as a vanished one (the next rescan drops it). */
  forgetEngine(url: string): void;
  rebuildModels(): void;
  watchGpuBusy(): void;
  applyPauseSchedule(): void;
  refreshEarningsFlag(): Promise<void>;
  refreshCatalogue(): void;
  applyGateway(): Promise<void>;
  /**
   * A request's text so far, read after the bridge got every delta the book holds (sent now rather than at the
   * end of the turn): the reply is exactly the text of the deltas a subscriber had before it, so the console
   * joins it with the deltas that follow without doubling any.
   */
  requestText(id: string): string;
}
