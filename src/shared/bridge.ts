// The one typed bridge between the UI and the agent. Both transports carry exactly this:
// the desktop over Electron IPC (src/main + src/preload), the browser console over a WebSocket
// (src/core/console). Every argument is validated on the agent side with these schemas.
import { z } from 'zod';
import type { ChannelName } from './channels';
import type { ApprovalView, BridgeErrorCode, OwnerConfirmation } from './bridge-error';
import type {
  EngineInfo,
  GpuInventory,
  GpuProcess,
  GpuSample,
  HubViewState,
  LinkStatus,
  LogEntry,
  ModelState,
  PauseState,
  RequestView,
  UsageTotals,
  Verdict,
  WeightsView,
} from './types';
import type { Alert, AlertTestResult } from './alerts';
import type { FleetTokenView, FleetUsageView, FleetView } from './fleet';

export interface AgentSnapshot {
  version: string;
  nodeId: string;
  nodeName: string;
  link: LinkStatus;
  pause: PauseState;
  gpu: GpuInventory;
  engines: EngineInfo[];
  models: ModelState[];
  today: UsageTotals;
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
  /** Serving, routed, earning — or why not and what to do (src/core/agent/verdict.ts). */
  verdict: Verdict;
  /** The hub's view of this node from its register ack: models it did not register, upgrade advice. */
  hubView?: HubViewState;
  /** The served models' weight files: located, hashed (progress), the composite the hub is told. */
  weights?: WeightsView;
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

export interface SettingsView {
  hubUrl: string;
  serviceUrl: string;
  nodeName: string;
  /** The key itself never leaves the agent; only whether one is set and where it is kept. */
  keySet: boolean;
  keyStorage: 'keychain' | 'file' | 'config' | 'env' | 'none';
  gatewayEnabled: boolean;
  gatewayListen: string;
  startAtLogin: boolean;
  closeToTray: boolean;
  theme: 'system' | 'light' | 'dark';
  autoPauseOnGpuBusy: boolean;
  /** Weekly windows (local time) during which serving pauses by itself. */
  pauseSchedule: PauseWindowView[];
  retentionDays: number;
  /** Alerts: '' = no webhook; one alert per kind per cooldown. */
  alertWebhookUrl: string;
  alertCooldownMinutes: number;
  desktopNotifications: boolean;
  /** Where the update check looks ('' = the default feed). */
  updateFeedUrl: string;
  /** Engine addresses added in the console (engines.addEndpoint): the ones the console can remove. */
  addedEndpoints: string[];
}

/** What the update check found. It never downloads anything. */
export interface UpdateCheckView {
  current: string;
  latest?: string;
  available: boolean;
  feed: string;
  checkedAt: number;
  error?: string;
  /** Why the check failed, stable (UpdateCheckErrorCode in src/core/update/check.ts); absent when it did not. */
  errorCode?: 'feed_not_found' | 'feed_http_error' | 'feed_too_large' | 'feed_unreadable' | 'bad_version' | 'feed_timeout' | 'feed_unreachable';
  /** Desktop app with a generic feed only (electron-updater): where the owner-approved download stands. */
  download?: UpdateDownloadView;
}

/** The desktop app's copy of a newer version: fetched only when the owner presses Download, installed
 *  only when they press Restart (or chose "install when I quit"). */
export interface UpdateDownloadView {
  state: 'available' | 'downloading' | 'downloaded' | 'error';
  version: string;
  /** 0-100 while downloading. */
  percent?: number;
  /** The owner chose to install when the app quits. */
  installOnQuit: boolean;
  error?: string;
}

/** One model over time (the per-model page): 24 equal buckets over the span, and the span's totals. */
export interface ModelReport {
  model: string;
  from: number;
  to: number;
  bucketMs: number;
  buckets: Array<Omit<ModelUsage, 'model' | 'tokensIn' | 'tokensOut'> & { start: number }>;
  totals: ModelUsage | null;
}

/** The version and build Settings shows. */
export interface AppInfoView {
  version: string;
  build: string;
  mode: 'desktop' | 'headless';
}

/** A test prompt's request id (its stream arrives as request.update / request.text events). */
export interface TryResult {
  id: string;
}

/** days: 0 = Sunday … 6 = Saturday; from/to "HH:MM"; to before from runs past midnight; equal = all day. */
export interface PauseWindowView {
  days: number[];
  from: string;
  to: string;
}

/**
 * A save that would send the saved provider key to a new host (or over plain ws:// / http:// to another
 * machine) without the key typed again in the same patch is not a SaveResult: it is refused with a
 * BridgeError `OWNER_CONFIRMATION_REQUIRED` carrying the approval, and applied when the owner approves.
 */
export type SaveResult =
  | {
      ok: true;
      /** Per field: saved, but worth saying (a hub or service URL over plain ws:// / http:// to another machine). */
      warnings?: Record<string, string>;
    }
  | { ok: false; errors: Record<string, string> };

export interface UsageBucket {
  start: number; // epoch ms
  requests: number;
  tokensIn: number;
  tokensOut: number;
  earnings: number;
  errors: number;
  energyWh?: number;
  cost?: number;
}

export interface ModelUsage extends UsageTotals {
  model: string;
  p50LatencyMs: number | null;
  p95LatencyMs: number | null;
  p50TokensPerSecond: number | null;
}

export interface UsageReport {
  from: number;
  to: number;
  totals: UsageTotals;
  buckets: UsageBucket[];
  perModel: ModelUsage[];
  errorRate: number;
}

/** Why a warmup failed (stable; the error says it for people, with what to fix). */
export type WarmupProblem =
  | 'not_served'
  | 'unhealthy'
  | 'engine_error'
  | 'no_reply'
  | 'wrong_role'
  | 'leaked_delimiter'
  | 'role_boundary'
  | 'budget_exhausted'
  | 'empty_reply';

export interface WarmupResult {
  success: boolean;
  loadTimeMs: number;
  memoryMb: number;
  error?: string;
  code?: WarmupProblem;
  /** It serves, but something is worth knowing (a reasoning model spent the greeting thinking). */
  warning?: string;
}

export interface PriceRow {
  /** A model id, or '*' for the default price of every model without its own. */
  model: string;
  inputPerM: number;
  outputPerM: number;
  effectiveFrom: number;
}

export interface PricesView {
  /** What the hub's provider status said (earnings_enabled); hub requests earn only while it is on. */
  earningsEnabled: boolean;
  /** Prices in force now (newest row per model); changes are kept as history in the ledger. */
  prices: PriceRow[];
}

/** What the hub's provider status says about a key beyond valid/invalid (status, onboarding step, next steps). */
export interface KeyStatusDetailView {
  status?: string;
  canConnect?: boolean;
  step?: number;
  totalSteps?: number;
  stepLabel?: string;
  warning?: string;
  nextSteps: string[];
}

export type EarningsZeroReason = 'earnings_disabled' | 'no_priced_model' | 'no_requests' | 'no_paid_requests';

/** One model's payout rate from the network (USD per 1M tokens). */
export interface NetworkRateView {
  modelId: string;
  /** What this provider is paid, USD per 1M tokens. */
  inputPerM: number;
  outputPerM: number;
  /** What the consumer pays (the list price). */
  listInputPerM: number;
  listOutputPerM: number;
  tier: string;
  /** GPU memory the network says the model needs (`min_vram_gb`, the Go provider's recommend-models), when it says. */
  minVramGb?: number;
}

/** Figures fetched from the platform: the last good ones, with when and why they are stale. */
export interface PlatformFigures<T> {
  value: T | null;
  asOf: number | null;
  stale: boolean;
  error?: string;
}

export interface PlatformStatsView {
  totalInferences: number;
  successfulInferences: number;
  failedInferences: number;
  totalInputTokens: number;
  totalOutputTokens: number;
  totalTokens: number;
  /** USDC, a dollar stablecoin: shown as USD. */
  totalEarningsUsd: number;
  uptime7dPercent: number;
  lastConnected: string;
}

/** Hub traffic over the ledger's whole life, to set beside the platform's own record. */
export interface LocalLifetimeView {
  requests: number;
  failed: number;
  tokensIn: number;
  tokensOut: number;
  earnings: number;
  /** When the oldest record still kept finished (null: the ledger is empty). */
  firstAt: number | null;
  /** Hub requests whose end the hub never heard of: their last message was not handed to the link (it was
   * down, or the agent stopped while sending). A request the hub cancelled itself is not among them. */
  undelivered: { requests: number; tokensIn: number; tokensOut: number; earnings: number };
}

/** Why the platform's totals and the local ledger differ; `code` is stable, `text` is for the owner. */
export interface DifferenceReason {
  code: 'undelivered' | 'failed' | 'ledger_age' | 'platform_stale' | 'platform_unavailable' | 'rates_differ' | 'local_unpaid' | 'tokens_differ' | 'match';
  text: string;
}

export interface ModelPricingView {
  model: string;
  /** network: the platform's payout rate; override: the owner's own price ("your estimate"); none: unpriced. */
  source: 'network' | 'override' | 'none';
  inputPerM: number | null;
  outputPerM: number | null;
}

export interface ElectricityView {
  perKwh: number;
  currency: string;
  usdPerUnit: number;
}

export interface EarningsOverview {
  generatedAt: number;
  earningsEnabled: boolean;
  rates: PlatformFigures<NetworkRateView[]>;
  platform: PlatformFigures<PlatformStatsView>;
  local: LocalLifetimeView;
  /** platform − local (hub traffic), when the platform's record is known. */
  difference: { requests: number; tokens: number; earningsUsd: number } | null;
  reasons: DifferenceReason[];
  pricing: ModelPricingView[];
  electricity: ElectricityView | null;
  /** The last 24 hours (or the ledger's life, when shorter). */
  recent: { windowMs: number; requests: number; earnings: number; energyWh: number; cost: number; net: number };
  /** Net per day and per 30-day month at the recent rate; null when there is too little history. */
  projection: { perDay: number; perMonth: number; assumptions: string[] } | null;
  projectionUnavailable?: string;
}

export interface DemandRowView {
  modelId: string;
  inputPerM: number;
  outputPerM: number;
  tier: string;
  /** serving: announced here · on_disk: an engine here has it, switched off (`local`: under the engine's own
   * name, e.g. an Ollama tag) · pullable: an Ollama engine here could pull it · none */
  here: 'serving' | 'on_disk' | 'pullable' | 'none';
  /** The engine model here that is this network model under another name (an Ollama tag on disk). */
  local?: { engineUrl: string; model: string };
  /** GPU memory the network says the model needs (model-demand `min_vram_gb`); null when it does not say. */
  minVramGb: number | null;
  /** The model's size on disk as its engine reports it (Ollama /api/tags `size`, GiB); null when unknown. */
  sizeGb: number | null;
  /** Ollama's details of the model on disk (`parameter_size` "7.6B", `quantization_level` "Q4_K_M"). */
  parameterSize?: string;
  quantization?: string;
  /** Judged from min_vram_gb when the network gives it, else from the size on disk; unknown without either. */
  fits: 'yes' | 'no' | 'unknown';
}

/** tag_not_network_model: the tag typed for the pull is not certainly that network model (qwen2.5:3b
 * for Qwen2.5-7B); mapping_refused: models.json could not take the mapping (the owner's own entry). */
export type PullNotAnnouncedCode = 'tag_not_network_model' | 'mapping_refused';

export interface PullStateView {
  engineUrl: string;
  model: string;
  /** The network model id this pull is for: announced with `model` as its local name once pulled. */
  networkId?: string;
  /** Set when the pulled model is NOT announced under `networkId` (the pull itself still runs): `code`
   * is stable, `text` says what happened and what to do. */
  notAnnounced?: { code: PullNotAnnouncedCode; text: string };
  status: string;
  completed: number;
  total: number;
  done: boolean;
  error?: string;
  startedAt: number;
  finishedAt?: number;
}

export interface DemandView {
  rates: { asOf: number | null; stale: boolean; error?: string };
  rows: DemandRowView[];
  vramGb: number | null;
  /** Ollama engines here that can pull a model. */
  ollamaEngines: string[];
  pulls: PullStateView[];
}

/** One browser session of the console, as Settings lists it (nothing in it opens anything). */
export interface ConsoleSessionView {
  /** A public id to name it by (not the cookie, not the page secret). */
  id: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
  /** The browser it began in (User-Agent, shortened) and the address it came from. */
  userAgent: string;
  address: string;
  /** The session of the page asking. */
  current: boolean;
}

export interface GatewayKeyView {
  name: string;
  createdAt: number;
  lastUsedAt?: number;
}

// ---- argument schemas (validated where the call lands) ----
const modelId = z.string().min(1).max(256);
const range = z.object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() }).refine((r) => r.to >= r.from, 'to must not be before from');

export const settingsPatchSchema = z
  .object({
    hubUrl: z.string().max(2048),
    serviceUrl: z.string().max(2048),
    nodeName: z.string().max(128),
    providerKey: z.string().max(512),
    gatewayEnabled: z.boolean(),
    gatewayListen: z.string().max(128),
    startAtLogin: z.boolean(),
    closeToTray: z.boolean(),
    theme: z.enum(['system', 'light', 'dark']),
    autoPauseOnGpuBusy: z.boolean(),
    pauseSchedule: z.array(z.object({ days: z.array(z.number().int()).max(7), from: z.string().max(8), to: z.string().max(8) }).strict()).max(20),
    retentionDays: z.number().int(),
    alertWebhookUrl: z.string().max(2048),
    alertCooldownMinutes: z.number().int(),
    desktopNotifications: z.boolean(),
    updateFeedUrl: z.string().max(2048),
  })
  .partial()
  .strict();
export type SettingsPatch = z.infer<typeof settingsPatchSchema>;

export const invokeSchemas = {
  'snapshot.get': z.object({}).strict(),
  'models.setEnabled': z.object({ model: modelId, enabled: z.boolean() }).strict(),
  'models.warmup': z.object({ model: modelId }).strict(),
  'models.setLimits': z
    .object({ model: modelId, maxConcurrent: z.number().int().min(1).max(1024), maxQueue: z.number().int().min(0).max(10_000) })
    .strict(),
  'serving.pause': z.object({ reason: z.string().max(200).optional() }).strict(),
  'serving.resume': z.object({}).strict(),
  'settings.get': z.object({}).strict(),
  'settings.save': z.object({ patch: settingsPatchSchema }).strict(),
  'settings.checkKey': z.object({ key: z.string().min(1).max(512) }).strict(),
  'requests.list': z.object({ limit: z.number().int().min(1).max(10_000).optional() }).strict(),
  'requests.text': z.object({ id: z.string().min(1).max(256) }).strict(),
  'usage.report': z
    .object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative(), bucket: z.enum(['15m', 'hour', 'day', 'month']) })
    .strict()
    .refine((r) => r.to >= r.from, 'to must not be before from'),
  'usage.exportCsv': range,
  'earnings.overview': z.object({ refresh: z.boolean().optional() }).strict(),
  'demand.list': z.object({}).strict(),
  'demand.pull': z.object({ engineUrl: z.string().min(1).max(2048), model: z.string().min(1).max(200), networkId: z.string().min(1).max(256).optional() }).strict(),
  'demand.serve': z.object({ modelId: z.string().min(1).max(256) }).strict(),
  'earnings.setElectricity': z
    .object({
      perKwh: z.number().min(0).max(100).nullable(),
      currency: z.string().regex(/^[A-Z]{3}$/, 'use a three-letter currency code such as USD or EUR').optional(),
      usdPerUnit: z.number().positive().max(100_000).optional(),
    })
    .strict(),
  'engines.rescan': z.object({}).strict(),
  'engines.addEndpoint': z.object({ url: z.string().min(1).max(2048), model: modelId.optional() }).strict(),
  'engines.removeEndpoint': z.object({ url: z.string().min(1).max(2048) }).strict(),
  'gpu.history': z.object({ minutes: z.number().int().min(1).max(60) }).strict(),
  'gpu.processes': z.object({}).strict(),
  'logs.list': z.object({ level: z.enum(['debug', 'info', 'warn', 'error']).optional(), limit: z.number().int().min(1).max(5000).optional() }).strict(),
  'logs.bundle': z.object({}).strict(),
  'gateway.keys.list': z.object({}).strict(),
  'gateway.keys.create': z
    .object({
      name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use letters, digits, dot, dash or underscore (1-64)'),
      /** The approval the owner gave for this key (the first call is refused with OWNER_CONFIRMATION_REQUIRED). */
      approvalId: z.string().regex(/^[0-9a-f]{24}$/).optional(),
    })
    .strict(),
  'gateway.keys.revoke': z.object({ name: z.string().min(1).max(64) }).strict(),
  'onboarding.complete': z.object({}).strict(),
  'prices.list': z.object({}).strict(),
  'prices.set': z
    .object({ model: z.union([modelId, z.literal('*')]), inputPerM: z.number().min(0).max(1_000_000), outputPerM: z.number().min(0).max(1_000_000) })
    .strict(),
  'notices.list': z.object({}).strict(),
  'providerStatus.refresh': z.object({}).strict(),
  'alerts.list': z.object({}).strict(),
  'alerts.test': z.object({}).strict(),
  'models.try': z.object({ model: modelId, prompt: z.string().trim().min(1, 'type a short prompt').max(4000), maxTokens: z.number().int().min(1).max(1024).optional() }).strict(),
  'update.check': z.object({}).strict(),
  'update.download': z.object({}).strict(),
  'update.install': z.object({ when: z.enum(['now', 'on-quit']) }).strict(),
  'app.info': z.object({}).strict(),
  'link.retry': z.object({}).strict(),
  'gpu.longHistory': z.object({ hours: z.number().int().min(1).max(168) }).strict(),
  'usage.model': z.object({ model: modelId, hours: z.number().int().min(1).max(168) }).strict(),
  'console.sessions': z.object({}).strict(),
  /** Ends one browser session by its id, or every one ("sign out everywhere") without it. */
  'console.signOut': z.object({ id: z.string().regex(/^[0-9a-f]{12}$/).optional() }).strict(),
  'fleet.list': z.object({}).strict(),
  'fleet.add': z.object({ url: z.string().min(1).max(2600), token: z.string().max(512).optional(), label: z.string().max(64).optional() }).strict(),
  'fleet.remove': z.object({ id: z.string().min(1).max(64) }).strict(),
  'fleet.openConsole': z.object({ id: z.string().min(1).max(64) }).strict(),
  'fleet.usage': z.object({}).strict(),
  'fleet.tokens.list': z.object({}).strict(),
  'fleet.tokens.create': z
    .object({
      name: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use letters, digits, dot, dash or underscore (1-64)'),
      /** The approval the owner gave for this token (the first call is refused with OWNER_CONFIRMATION_REQUIRED). */
      approvalId: z.string().regex(/^[0-9a-f]{24}$/).optional(),
    })
    .strict(),
  'fleet.tokens.revoke': z.object({ name: z.string().min(1).max(64) }).strict(),
} as const satisfies { readonly [C in ChannelName]: z.ZodType }; // the names are channels.ts's: none missing, none extra

export type InvokeChannel = keyof typeof invokeSchemas;
export type InvokeArgs<C extends InvokeChannel> = z.infer<(typeof invokeSchemas)[C]>;

export interface InvokeResults {
  'snapshot.get': AgentSnapshot;
  'models.setEnabled': ModelState[];
  'models.warmup': WarmupResult;
  'models.setLimits': ModelState[];
  'serving.pause': PauseState;
  'serving.resume': PauseState;
  'settings.get': SettingsView;
  'settings.save': SaveResult;
  'settings.checkKey': { valid: boolean; message: string; detail?: KeyStatusDetailView };
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
  /** Desktop app only: starts (or joins) the download of the version the last check found. */
  'update.download': UpdateDownloadView;
  /** Desktop app only: 'now' restarts into the downloaded version; 'on-quit' installs it when the app quits. */
  'update.install': UpdateDownloadView;
  'app.info': AppInfoView;
  'link.retry': LinkStatus;
  /** One point per minute (utilisation and power averaged; VRAM, temperature, RAM at their peak). */
  'gpu.longHistory': GpuSample[];
  'usage.model': ModelReport;
  /** The browser console's open sessions (answered by the console server; none in the desktop app). */
  'console.sessions': ConsoleSessionView[];
  'console.signOut': { ended: number };
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
}

/** Events pushed to the UI, in batches (a few per second at most). */
export type BridgeEvent =
  | { type: 'snapshot'; snapshot: AgentSnapshot }
  | { type: 'gpu.sample'; sample: GpuSample }
  | { type: 'request.update'; request: RequestView }
  | { type: 'request.text'; id: string; delta: string }
  | { type: 'log'; entry: LogEntry }
  | { type: 'notice'; notice: HubNoticeView }
  | { type: 'alert'; alert: Alert }
  | { type: 'update.download'; download: UpdateDownloadView }
  /** An approval the owner was asked for ended (OWNER_CONFIRMATION_REQUIRED): approved, denied, expired, failed. */
  | { type: 'approval'; approval: ApprovalView }
  | { type: 'fleet'; fleet: FleetView };

export type BridgeEventType = BridgeEvent['type'];

/** What the renderer sees as `window.swan` (desktop) or its WebSocket twin (browser console). */
export interface SwanBridge {
  invoke<C extends InvokeChannel>(channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]>;
  /** Receives each batch of events; returns an unsubscribe function. */
  onEvents(cb: (events: BridgeEvent[]) => void): () => void;
  transport: 'ipc' | 'websocket';
}

/**
 * The reply envelope both transports use, so errors reach the UI as text, never as a crash. `error`
 * is the owner's plain message; `code` is stable (src/shared/bridge-error.ts).
 */
export type InvokeReply<T> = { ok: true; value: T } | { ok: false; error: string; code: BridgeErrorCode; confirmation?: OwnerConfirmation };

export {
  BridgeError,
  bridgeErrorCode,
  confirmationOf,
  isBridgeErrorCode,
  BRIDGE_ERROR_CODES,
  type ApprovalKind,
  type ApprovalStatus,
  type ApprovalView,
  type BridgeErrorCode,
  type OwnerConfirmation,
} from './bridge-error';

export { isChannelName as isInvokeChannel, INVOKE_CHANNELS } from './channels';

/**
 * What a transport (Electron IPC in src/main, the console WebSocket in src/core/console) talks to.
 * The Agent implements it: invoke() validates `args` against invokeSchemas and rejects with an Error
 * whose message is plain text for the owner; subscribe() delivers every event unbatched — the
 * transport batches them (a few flushes per second at most).
 */
export interface BridgeBackend {
  invoke(channel: string, args: unknown): Promise<unknown>;
  subscribe(cb: (event: BridgeEvent) => void): () => void;
}
