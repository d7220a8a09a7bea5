// The bridge's verbs: their names, and what each one answers. The names are plain data with no runtime
// import, so the sandboxed preload can check a channel without bundling zod; what each verb takes is its
// schema in ./schemas.ts (the compiler keeps the two lists in step).
import type {
  EngineInfo,
  GpuProcess,
  GpuSample,
  GpuServingState,
  GpuPowerLimitView,
  LinkStatus,
  LogEntry,
  ModelState,
  PauseState,
  RequestView,
} from '../types';
import type { Alert, AlertTestResult } from '../alerts';
import type { FleetTokenView, FleetUsageView, FleetView } from '../fleet';
import type { AgentSnapshot, HubNoticeView, ProviderStatusView } from '../views/snapshot';
import type {
  AppInfoView,
  ConsoleSessionView,
  GatewayKeyView,
  KeyStatusDetailView,
  SaveResult,
  SettingsView,
  UpdateCheckView,
  UpdateDownloadView,
} from '../views/settings';
import type { EarningsOverview, ModelReport, NetworkRecordsView, PricesView, RailsView, UsageReport } from '../views/usage';
import type { DemandView } from '../views/demand';
import type { TryResult, WarmupResult } from '../views/models';
import type { ManagedEngineView, ModelDownloadView, RecommendView } from '../views/managed';
import type { AccountRead, ApprovalRequestView, ProviderAccountView, ProviderAddressesView } from '../views/account';

export const INVOKE_CHANNELS = [
  'snapshot.get',
  'models.setEnabled',
  'models.warmup',
  'models.setLimits',
  'serving.pause',
  'serving.resume',
  'settings.get',
  'settings.save',
  'settings.checkKey',
  'requests.list',
  'requests.text',
  'usage.report',
  'usage.exportCsv',
  'earnings.overview',
  'earnings.setElectricity',
  'demand.list',
  'demand.pull',
  'demand.serve',
  'engines.rescan',
  'engines.addEndpoint',
  'engines.removeEndpoint',
  'gpu.history',
  'gpu.processes',
  'gpu.giveBack',
  'gpu.powerLimits',
  'gpu.setPowerLimit',
  'logs.list',
  'logs.bundle',
  'gateway.keys.list',
  'gateway.keys.create',
  'gateway.keys.revoke',
  'onboarding.complete',
  'prices.list',
  'prices.set',
  'notices.list',
  'providerStatus.refresh',
  'alerts.list',
  'alerts.test',
  'models.try',
  'update.check',
  'update.download',
  'update.install',
  'update.status',
  'app.info',
  'link.retry',
  'gpu.longHistory',
  'usage.model',
  'usage.rails',
  'network.records',
  'fleet.list',
  'fleet.add',
  'fleet.remove',
  'fleet.openConsole',
  'fleet.usage',
  'fleet.tokens.list',
  'fleet.tokens.create',
  'fleet.tokens.revoke',
  'console.sessions',
  'console.signOut',
  'managed.list',
  'managed.serve',
  'managed.stop',
  'models.confirmMapping',
  'models.recommend',
  'models.serveAs',
  'models.catalogueIds',
  'downloads.list',
  'downloads.start',
  'downloads.cancel',
  'account.get',
  'account.setBeneficiary',
  'account.setOwner',
  'account.requestApproval',
] as const;

export type InvokeChannel = (typeof INVOKE_CHANNELS)[number];

const SET: ReadonlySet<string> = new Set(INVOKE_CHANNELS);

export function isInvokeChannel(x: unknown): x is InvokeChannel {
  return typeof x === 'string' && SET.has(x);
}

/** What each verb answers (its `value` in an InvokeReply). */
export interface InvokeResults {
  'snapshot.get': AgentSnapshot;
  'models.setEnabled': ModelState[];
  'models.warmup': WarmupResult;
  'models.setLimits': ModelState[];
  'serving.pause': PauseState;
  'serving.resume': PauseState;
  'settings.get': SettingsView;
  'settings.save': SaveResult;
  /**
   * code: key_accepted | key_refused | not_a_hub (the address answered, but not as a Swan hub) | key_unchecked (no answer).
   * `unreachable`: the platform could not be asked; the key may be saved anyway and is checked once the network is back.
   */
  'settings.checkKey': {
    valid: boolean;
    code: 'key_accepted' | 'key_refused' | 'not_a_hub' | 'key_unchecked';
    message: string;
    detail?: KeyStatusDetailView;
    unreachable?: boolean;
  };
  'requests.list': RequestView[];
  'requests.text': string;
  'usage.report': UsageReport;
  'usage.exportCsv': string;
  'earnings.overview': EarningsOverview;
  'demand.list': DemandView;
  'demand.pull': DemandView;
  'demand.serve': DemandView;
  'earnings.setElectricity': EarningsOverview;
  'engines.rescan': EngineInfo[];
  'engines.addEndpoint': EngineInfo[];
  /** Forgets an address added in the console (settings.json): no longer probed, served or checked by doctor. */
  'engines.removeEndpoint': EngineInfo[];
  'gpu.history': GpuSample[];
  'gpu.processes': GpuProcess[];
  /** Per-GPU serving: each GPU's state after the change (not_supported on a rig with one GPU, not_found for no such GPU). */
  'gpu.giveBack': GpuServingState[];
  /** Each NVIDIA GPU's power limit and range ([] without nvidia-smi). */
  'gpu.powerLimits': GpuPowerLimitView[];
  /**
   * Sets one GPU's power limit through the driver (nvidia-smi -pl; the owner consented): the limits after it.
   * Refused: not_supported (no_tool, not_supported), invalid_args (out_of_range), not_found (no_gpu),
   * needs_admin (the message says the command to run as an administrator), failed (tool_failed).
   */
  'gpu.setPowerLimit': GpuPowerLimitView;
  'logs.list': LogEntry[];
  'logs.bundle': string;
  'gateway.keys.list': GatewayKeyView[];
  'gateway.keys.create': { name: string; key: string };
  'gateway.keys.revoke': GatewayKeyView[];
  'onboarding.complete': AgentSnapshot;
  'prices.list': PricesView;
  'prices.set': PricesView;
  'notices.list': HubNoticeView[];
  'providerStatus.refresh': ProviderStatusView;
  'alerts.list': Alert[];
  'alerts.test': AlertTestResult;
  'models.try': TryResult;
  'update.check': UpdateCheckView;
  /** Starts (or joins) the download of the version the last check found: verified against SHA256SUMS, then held while a request is in flight. */
  'update.download': UpdateDownloadView;
  /** Desktop app with a generic feed: 'now' restarts into the downloaded version; 'on-quit' installs it at quit. The agent names the command instead. */
  'update.install': UpdateDownloadView;
  /** The last update check and where its download stands (null before any check): no request to the channel. */
  'update.status': UpdateCheckView | null;
  'app.info': AppInfoView;
  'link.retry': LinkStatus;
  /** One point per minute (utilisation and power averaged; VRAM, temperature, RAM at their peak). */
  'gpu.longHistory': GpuSample[];
  'usage.model': ModelReport;
  /** The time paused and throttled in the range by cause, from the ledger's rail decisions, and the latest decisions. */
  'usage.rails': RailsView;
  'network.records': NetworkRecordsView;
  /** The browser console's open sessions (answered by the console server; none in the desktop app). */
  'console.sessions': ConsoleSessionView[];
  'console.signOut': { ended: number };
  /** The engines this agent runs for the owner (src/core/managed/). */
  'managed.list': ManagedEngineView[];
  /** Records the serve request in the home (as `models serve` does) and starts the engine. */
  'managed.serve': ManagedEngineView[];
  /** Stops a managed engine and forgets its serve request. */
  'managed.stop': ManagedEngineView[];
  /** The owner confirms a mapping the engine's report contradicts (this finding only): the model is announced. */
  'models.confirmMapping': ModelState[];
  /** What this GPU should serve: the network's catalogue and demand, this GPU's memory and our fit estimate. */
  'models.recommend': RecommendView;
  /** models.json maps a catalogue id to a model an engine here serves; `modelsJson` is where (its mapping is checked like any other). */
  'models.serveAs': { models: ModelState[]; modelsJson: string };
  /** The ids of the network's catalogue as last read (empty before it was read). */
  'models.catalogueIds': string[];
  /** The model downloads this agent runs (the models folder), newest first. */
  'downloads.list': ModelDownloadView[];
  /** Starts (or joins) a verified download from the network's model repository. */
  'downloads.start': ModelDownloadView[];
  /** Cancels a running download; what arrived is kept for a resume. */
  'downloads.cancel': ModelDownloadView[];
  /** This rig and the rigs this console reads (src/core/fleet). */
  'fleet.list': FleetView;
  /** Reads the rig once, then adds it (refused with the reason when it cannot be read). */
  'fleet.add': FleetView;
  'fleet.remove': FleetView;
  /** The address that opens the rig's own console (signed in when this console holds its console token). */
  'fleet.openConsole': { url: string; signedIn: boolean };
  /** Every rig's ledger, fetched now. */
  'fleet.usage': FleetUsageView;
  /** The read-only tokens other consoles use to read this rig. */
  'fleet.tokens.list': FleetTokenView[];
  /** The token is in the answer once; only its hash is kept. */
  'fleet.tokens.create': { name: string; token: string; scope: 'read' };
  'fleet.tokens.revoke': FleetTokenView[];
  /** The provider's addresses and the collateral chains, read from the platform now (src/core/platform/provider-account.ts). */
  'account.get': ProviderAccountView;
  /** Where payouts go: held for the owner's approval first (OWNER_CONFIRMATION_REQUIRED), then set on the platform. */
  'account.setBeneficiary': AccountRead<ProviderAddressesView>;
  /** The owner address, set once and never changed: approved by the owner as the payout address is. */
  'account.setOwner': AccountRead<ProviderAddressesView>;
  'account.requestApproval': AccountRead<ApprovalRequestView>;
}
