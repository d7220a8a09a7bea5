// Many rigs in one console: what a rig says about itself over its read-only fleet API
// (src/core/console/fleet-api.ts), and what the reading console shows (src/core/fleet/). Plain data:
// the summary crosses the network as JSON, and the views cross the bridge.
import type { Alert } from './alerts';

/** An alert as another rig sent it: its kind is that rig's (it may run a newer version with kinds this one lacks). */
export type RigAlert = Omit<Alert, 'kind'> & { kind: string };
import type { LinkReasonCode, LinkState, ModelHealth, UsageTotals } from './types';
import type { LocalLifetimeView, ModelUsage, PlatformFigures, PlatformStatsView } from './views/usage';

/** The fleet API's version: a reader refuses answers of another. */
export const FLEET_API_VERSION = 1;

/** What a fleet token may do. Only reading exists: a rig never lets another rig change it. */
export type FleetScope = 'read';

/** What the token a reader presented grants: `full` is the rig's console token, `read` a fleet token. */
export type FleetAccess = 'full' | 'read';

export interface RigModel {
  id: string;
  enabled: boolean;
  health: ModelHealth;
  inFlight: number;
  queued: number;
}

export interface RigGpu {
  index: number;
  model: string;
  vramTotalMb: number;
  /** The last sample's figures (null when the GPU tool gave none). */
  utilization: number | null;
  vramUsedMb: number | null;
  temperatureC: number | null;
  powerW: number | null;
}

/** GET /api/fleet/v1/summary: one rig now. Figures are the rig's own (its ledger, its local day and month). */
export interface RigSummary {
  api: typeof FLEET_API_VERSION;
  nodeId: string;
  nodeName: string;
  version: string;
  /** The rig's clock when it answered. */
  at: number;
  access: FleetAccess;
  link: { state: LinkState; since: number; code?: LinkReasonCode; reason?: string };
  paused: boolean;
  pauseReason?: string;
  models: RigModel[];
  gpus: RigGpu[];
  /** false when the GPU tool is missing or hung. */
  gpuMetrics: boolean;
  today: UsageTotals;
  month: UsageTotals;
  /** Whether the hub says this provider earns. */
  earningsEnabled: boolean;
  /** The rig's alerts of the last 24 hours, newest first (at most 20). */
  alerts: RigAlert[];
  /** The rig's own verdict (what its console shows), absent from rigs of an older version: the reader then says
   *  it is not known, and never reads "serving" from the link alone. */
  verdict?: RigVerdict;
}

/** A rig's verdict as it crosses the network: the state, its tone and words, and the findings' stable codes. */
export interface RigVerdict {
  /** A VerdictState, as a string: a newer rig may know states this reader does not. */
  state: string;
  tone: 'ok' | 'warn' | 'bad';
  label: string;
  headline: string;
  codes: string[];
}

/** GET /api/fleet/v1/usage: the rig's ledger over the usual periods, and the platform's record of it. */
export interface RigUsage {
  api: typeof FLEET_API_VERSION;
  nodeId: string;
  nodeName: string;
  at: number;
  today: UsageTotals;
  last7: UsageTotals;
  last30: UsageTotals;
  month: UsageTotals;
  perModel30: ModelUsage[];
  earningsEnabled: boolean;
  /** The platform's own record of this provider (fetched by the rig with its own key), and the rig's hub traffic beside it. */
  platform: PlatformFigures<PlatformStatsView>;
  /** A fingerprint of the rig's provider key (the first 12 hex digits of its SHA-256), null without a key: rigs
   *  that share a key share one platform record, which the sums count once. */
  providerKeyId: string | null;
  local: LocalLifetimeView;
}

/**
 * How reading a rig went. ok: it answered; unreachable: no answer (refused, timed out, DNS); refused: it
 * answered 401/403 (token wrong or revoked); invalid: it answered something that is not a Swan rig's
 * fleet API; pending: not asked yet.
 */
export type RigStatus = 'ok' | 'unreachable' | 'refused' | 'invalid' | 'pending';

export interface FleetRigView {
  /** 'self' for this rig; otherwise the id given when it was added. */
  id: string;
  self: boolean;
  /** The console address the owner added ('' for this rig). */
  url: string;
  /** The owner's name for the rig, else the rig's node name. */
  label: string;
  status: RigStatus;
  /** Why the last read failed (plain words), and its stable code. */
  error?: string;
  errorCode?: FleetErrorCode;
  /** Since when the status is what it is (the first failed read of a run of failures). */
  since: number;
  /** When the rig last answered. */
  lastSeenAt?: number;
  /** The last answer (kept while the rig is unreachable: its figures up to then). */
  summary?: RigSummary;
  /** Reached over plain HTTP on another machine: the token and figures cross the network unencrypted. */
  insecure: boolean;
  addedAt: number;
}

export interface FleetTotals {
  rigs: number;
  /** Rigs that answered their last read. */
  reachable: number;
  /** Rigs whose own verdict is serving (routed and earning); a rig that did not say is not counted. */
  serving: number;
  gpus: number;
  /** Distinct models served (enabled) across rigs. */
  models: number;
  inFlight: number;
  today: UsageTotals;
  month: UsageTotals;
  /** Rigs whose figures in the totals are their last known ones (unreachable now). */
  stale: number;
}

export interface FleetView {
  rigs: FleetRigView[];
  totals: FleetTotals;
  updatedAt: number;
}

/** One rig's usage as the reading console got it. */
export interface FleetUsageRig {
  id: string;
  self: boolean;
  label: string;
  status: RigStatus;
  error?: string;
  usage?: RigUsage;
}

export interface FleetUsageView {
  rigs: FleetUsageRig[];
  /** Sums over the rigs that answered. */
  totals: { today: UsageTotals; last7: UsageTotals; last30: UsageTotals; month: UsageTotals };
  /** The platform's figures summed over the distinct provider keys whose record is known (rigs sharing a key count once). */
  platform: { providers: number; rigs: number; totalInferences: number; totalTokens: number; totalEarningsUsd: number } | null;
  generatedAt: number;
}

export interface FleetTokenView {
  name: string;
  scope: FleetScope;
  createdAt: number;
  lastUsedAt?: number;
}

/**
 * Stable codes of fleet failures. rig_unreachable: no answer; rig_refused_token: 401/403; rig_bad_answer:
 * not a fleet API answer; rig_is_self: the address is this console; rig_duplicate: that rig (node id or
 * address) is added already; fleet_address_invalid: not an http(s) console address; fleet_address_forbidden:
 * link-local or cloud metadata addresses; rig_not_found: no rig with that id; fleet_token_invalid: the
 * token is not a token; fleet_token_name_invalid / fleet_token_name_taken / fleet_token_not_found: token names; rig_read_only:
 * the rig was added with a read-only token, so its console cannot be opened signed in.
 */
export type FleetErrorCode =
  | 'rig_unreachable'
  | 'rig_refused_token'
  | 'rig_bad_answer'
  | 'rig_is_self'
  | 'rig_duplicate'
  | 'fleet_address_invalid'
  | 'fleet_address_forbidden'
  | 'rig_not_found'
  | 'fleet_token_invalid'
  | 'fleet_token_name_invalid'
  | 'fleet_token_name_taken'
  | 'fleet_token_not_found'
  | 'rig_read_only';

/** Empty usage totals. */
export function zeroTotals(): UsageTotals {
  return { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };
}

/** a + b, field by field (energy and cost only when either side has them). */
export function addTotals(a: UsageTotals, b: UsageTotals): UsageTotals {
  const out: UsageTotals = {
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    tokensIn: a.tokensIn + b.tokensIn,
    tokensOut: a.tokensOut + b.tokensOut,
    earnings: a.earnings + b.earnings,
  };
  if (a.energyWh !== undefined || b.energyWh !== undefined) out.energyWh = (a.energyWh ?? 0) + (b.energyWh ?? 0);
  if (a.cost !== undefined || b.cost !== undefined) out.cost = (a.cost ?? 0) + (b.cost ?? 0);
  return out;
}
