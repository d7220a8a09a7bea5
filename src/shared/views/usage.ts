// What the Usage page (and the per-model page, the Today card, `swan-provider usage`) reads: the ledger's
// figures over a span, prices, and the earnings overview set beside the platform's own record.
import type { UsageTotals } from '../types';

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

/** One model over time (the per-model page): 24 equal buckets over the span, and the span's totals. */
export interface ModelReport {
  model: string;
  from: number;
  to: number;
  bucketMs: number;
  buckets: Array<Omit<ModelUsage, 'model' | 'tokensIn' | 'tokensOut'> & { start: number }>;
  totals: ModelUsage | null;
}

/** prices_unknown: the network's price list was never read, so whether a model is priced is not known. */
export type EarningsZeroReason = 'earnings_disabled' | 'no_priced_model' | 'prices_unknown' | 'no_requests' | 'no_paid_requests';

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

/** One model as the network holds it (GET /providers/{id}/models/details): what the platform routes on. */
export interface NetworkModelFacts {
  modelId: string;
  /** The node advertises it now (false rows are history: served before, not routable today). */
  offered: boolean;
  available: number;
  capacity: number;
  recentSuccesses: number;
  recentFailures: number;
  /** Requests the platform could not hand to this node (dispatch_failures). */
  dispatchFailures: number;
  /** throughput_tok_per_s */
  throughput: number;
  /** Epoch ms of last_request_at; absent: none. */
  lastRequestAt?: number;
}

/** The network's record of a model beside what this machine saw. */
export interface NetworkModelRow extends NetworkModelFacts {
  /** This machine announces it now. */
  servedHere: boolean;
  /** This machine's ledger over the same period: requests, errors, p50 tokens per second. */
  local: { requests: number; errors: number; tokensPerSecond: number | null };
}

/** The network's records beside the local ones (the Usage page's "The network's records" card). */
export interface NetworkRecordsView {
  span: '24h' | '7d' | '30d';
  models: { ok: true; rows: NetworkModelRow[]; notListed: string[] } | { ok: false; error: string };
  earnings:
    | {
        ok: true;
        currency: string;
        points: Array<{ at: number; usd: number; payAsYouGoUsd: number; subscriptionUsd: number; requests: number }>;
        totalUsd: number;
        payAsYouGoUsd: number;
        subscriptionUsd: number;
        localEstimateUsd: number;
        differenceUsd: number;
        explanation: string;
      }
    | { ok: false; error: string; localEstimateUsd: number };
}

/** One decision of the guard rails or the pause controller, as the ledger keeps it (rail_events). */
export interface RailEventView {
  id: number;
  at: number;
  /** Stable code: gpu_hot_throttle, gpu_hot_pause, gpu_cool_resume, pause_<cause>, resume_<cause>, rails_start. */
  code: string;
  /** pause | throttle | all (the agent's start, which ends every open span). */
  rail: string;
  /** manual | gpu_busy | gpu_hot | schedule | agent. */
  cause: string;
  active: boolean;
  gpu: number | null;
  detail: string;
}

/** The time serving was paused and throttled in [from, to), by cause (a moment counted once). */
export interface RailSpanSummary {
  from: number;
  to: number;
  pausedMs: number;
  pausedByCause: Record<string, number>;
  throttledMs: number;
  throttledByCause: Record<string, number>;
  /** Causes still pausing / throttling at `to`. */
  openPause: string[];
  openThrottle: string[];
  /** What the pauses cost (ledger/rail-events.ts railCost); absent where it was not worked out. */
  cost?: RailCost;
}

/**
 * What the rails cost in a span. `declined` is counted: the network's requests refused while paused or full
 * (429). The rest is an estimate, never a record: the time paused by each cause at the rate this node served
 * and earned over its last 7 days of serving; `known` false when there is too little of that history (under an
 * hour served, or no paid request in it), and then there is no estimate at all.
 */
export interface RailCost {
  known: boolean;
  declined: number;
  /** The served time the rate was read over (ms). */
  basisMs: number;
  /** Estimated requests not served and earnings not made, in all and by pause cause. */
  requests: number;
  earnings: number;
  byCause: Record<string, { requests: number; earnings: number }>;
}

/** usage.rails: the summary of a range and the latest decisions. */
export interface RailsView {
  summary: RailSpanSummary;
  recent: RailEventView[];
}
