// One rig's figures as the fleet API gives them (RigSummary, RigUsage), built from the rig's own parts:
// the snapshot, the last GPU sample, its ledger, its alerts and its copy of the platform's record. The
// same functions answer another console's read (fleet-api.ts), this console's own row on the Fleet page
// and `usage --fleet`'s line for this rig, so every rig's figures are computed the same way.
import crypto from 'node:crypto';
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { PlatformFigures, PlatformStatsView } from '../../shared/views/usage';
import { FLEET_API_VERSION, type FleetAccess, type RigGpu, type RigSummary, type RigUsage } from '../../shared/fleet';
import type { GpuSample, UsageTotals } from '../../shared/types';
import type { Alert } from '../../shared/alerts';
import type { Ledger } from '../ledger/ledger';
import { DAY_MS } from '../ledger/time-buckets';

/** Alerts older than this are not sent. */
const ALERT_WINDOW_MS = DAY_MS;
const MAX_ALERTS = 20;

const EMPTY: UsageTotals = { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 };

/** Midnight of the first day of this month, local time (the rig's own calendar). */
export function monthStart(now: number): number {
  const d = new Date(now);
  return new Date(d.getFullYear(), d.getMonth(), 1).getTime();
}

export interface SummarySources {
  snapshot: () => AgentSnapshot;
  latestSample: () => GpuSample | null;
  ledger?: Ledger;
  alerts: () => Alert[];
  now?: () => number;
}

export function rigSummary(p: SummarySources, access: FleetAccess): RigSummary {
  const now = p.now?.() ?? Date.now();
  const s = p.snapshot();
  const sample = p.latestSample();
  const live = new Map((sample?.available ? sample.devices : []).map((d) => [d.index, d]));
  const gpus: RigGpu[] = s.gpu.gpus.map((g) => {
    const d = live.get(g.index);
    return {
      index: g.index,
      model: g.model,
      vramTotalMb: g.vramTotalMb,
      utilization: d?.utilization ?? null,
      vramUsedMb: d?.vramUsedMb ?? null,
      temperatureC: d?.temperatureC ?? null,
      powerW: d?.powerW ?? null,
    };
  });
  return {
    api: FLEET_API_VERSION,
    nodeId: s.nodeId,
    nodeName: s.nodeName,
    version: s.version,
    at: now,
    access,
    link: { state: s.link.state, since: s.link.since, ...(s.link.code ? { code: s.link.code } : {}), ...(s.link.reason ? { reason: s.link.reason } : {}) },
    paused: s.pause.paused,
    ...(s.pause.paused && s.pause.reason ? { pauseReason: s.pause.reason } : {}),
    models: s.models.map((m) => ({ id: m.id, enabled: m.enabled, health: m.health, inFlight: m.inFlight, queued: m.queued })),
    gpus,
    gpuMetrics: sample?.available ?? false,
    today: s.today,
    month: p.ledger?.totals(monthStart(now), now + 1) ?? EMPTY,
    earningsEnabled: p.ledger?.isEarningsEnabled() ?? true,
    alerts: p
      .alerts()
      .filter((a) => a.ts >= now - ALERT_WINDOW_MS && a.kind !== 'test')
      .slice(0, MAX_ALERTS),
    verdict: {
      state: s.verdict.state,
      tone: s.verdict.tone,
      label: s.verdict.label,
      headline: s.verdict.headline,
      codes: s.verdict.reasons.map((r) => r.code),
    },
  };
}

/** The first 12 hex digits of the key's SHA-256 (a 256-bit key cannot be recovered from it); null without a key. */
export function keyFingerprint(key: string): string | null {
  return key ? crypto.createHash('sha256').update(key).digest('hex').slice(0, 12) : null;
}

export interface UsageSources {
  nodeId: string;
  nodeName: string;
  ledger?: Ledger;
  /** The platform's record of this provider (the rig's cached copy, fetched with its own key). */
  platform: () => Promise<PlatformFigures<PlatformStatsView>> | PlatformFigures<PlatformStatsView>;
  /** The provider key ('' when none): only its fingerprint leaves the rig. */
  providerKey: string;
  now?: () => number;
}

export async function rigUsage(p: UsageSources): Promise<RigUsage> {
  const now = p.now?.() ?? Date.now();
  const l = p.ledger;
  const end = now + 1;
  const last30 = l?.report(now - 30 * DAY_MS, end, 'day');
  return {
    api: FLEET_API_VERSION,
    nodeId: p.nodeId,
    nodeName: p.nodeName,
    at: now,
    today: l?.today() ?? EMPTY,
    last7: l?.last(7) ?? EMPTY,
    last30: last30?.totals ?? EMPTY,
    month: l?.totals(monthStart(now), end) ?? EMPTY,
    perModel30: last30?.perModel ?? [],
    earningsEnabled: l?.isEarningsEnabled() ?? true,
    platform: await p.platform(),
    providerKeyId: keyFingerprint(p.providerKey),
    local: l?.hubLifetime() ?? {
      requests: 0,
      failed: 0,
      tokensIn: 0,
      tokensOut: 0,
      earnings: 0,
      firstAt: null,
      undelivered: { requests: 0, tokensIn: 0, tokensOut: 0, earnings: 0 },
    },
  };
}
