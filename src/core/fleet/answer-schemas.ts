// What another rig's fleet API may answer, checked before anything of it is shown or summed: the rig is
// outside input (it may run another version, be misconfigured, or not be a Swan rig at all). Bounded:
// strings, lists and numbers all have limits; unknown fields are dropped.
import { z } from 'zod';
import { FLEET_API_VERSION, type RigSummary, type RigUsage } from '../../shared/fleet';

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const amount = z.number().finite().min(-1e12).max(1e12);
const time = z.number().int().nonnegative();
const text = (max: number) => z.string().max(max);
const nullableNumber = z.number().finite().nullable();

const totals = z.object({
  requests: count,
  errors: count,
  tokensIn: count,
  tokensOut: count,
  earnings: amount,
  energyWh: z.number().finite().nonnegative().optional(),
  cost: amount.optional(),
});

const linkState = z.enum(['idle', 'connecting', 'registering', 'connected', 'backoff', 'auth_failed', 'stopped']);
const linkCode = z.enum([
  'READ_DEADLINE',
  'HEARTBEAT_UNACKED',
  'REGISTER_TIMEOUT',
  'REGISTER_REFUSED',
  'AUTH_FAILED',
  'WRITE_DEADLINE',
  'UPGRADE_REFUSED',
  'UNREACHABLE',
  'MESSAGE_TOO_LARGE',
  'SOCKET_ERROR',
  'CLOSED',
]);
const health = z.enum(['healthy', 'degraded', 'unhealthy']);

export const rigSummarySchema = z.object({
  api: z.literal(FLEET_API_VERSION),
  nodeId: text(256).min(1),
  nodeName: text(256),
  version: text(64),
  at: time,
  access: z.enum(['full', 'read']),
  link: z.object({ state: linkState, since: time, code: linkCode.optional(), reason: text(2000).optional() }),
  paused: z.boolean(),
  pauseReason: text(500).optional(),
  models: z.array(z.object({ id: text(256), enabled: z.boolean(), health, inFlight: count, queued: count })).max(512),
  gpus: z
    .array(
      z.object({
        index: count,
        model: text(256),
        vramTotalMb: z.number().finite().nonnegative(),
        utilization: nullableNumber,
        vramUsedMb: nullableNumber,
        temperatureC: nullableNumber,
        powerW: nullableNumber,
      }),
    )
    .max(64),
  gpuMetrics: z.boolean(),
  today: totals,
  month: totals,
  earningsEnabled: z.boolean(),
  alerts: z.array(z.object({ id: text(64), kind: z.string().max(32), ts: time, title: text(200), text: text(1000) })).max(50),
  // Optional: a rig of an older version does not send it (then its verdict is shown as not known).
  verdict: z
    .object({
      state: z.string().max(32),
      tone: z.enum(['ok', 'warn', 'bad']),
      label: text(64),
      headline: text(2000),
      codes: z.array(z.string().max(64)).max(64),
    })
    .optional(),
});

const platformStats = z.object({
  totalInferences: count,
  successfulInferences: count,
  failedInferences: count,
  totalInputTokens: count,
  totalOutputTokens: count,
  totalTokens: count,
  totalEarningsUsd: amount,
  uptime7dPercent: z.number().finite(),
  lastConnected: text(64),
});

const modelUsage = totals.extend({
  model: text(256),
  p50LatencyMs: nullableNumber,
  p95LatencyMs: nullableNumber,
  p50TokensPerSecond: nullableNumber,
});

export const rigUsageSchema = z.object({
  api: z.literal(FLEET_API_VERSION),
  nodeId: text(256).min(1),
  nodeName: text(256),
  at: time,
  today: totals,
  last7: totals,
  last30: totals,
  month: totals,
  perModel30: z.array(modelUsage).max(512),
  earningsEnabled: z.boolean(),
  platform: z.object({ value: platformStats.nullable(), asOf: time.nullable(), stale: z.boolean(), error: text(2000).optional() }),
  providerKeyId: z
    .string()
    .regex(/^[0-9a-f]{12}$/)
    .nullable(),
  local: z.object({
    requests: count,
    failed: count,
    tokensIn: count,
    tokensOut: count,
    earnings: amount,
    firstAt: time.nullable(),
    undelivered: z.object({ requests: count, tokensIn: count, tokensOut: count, earnings: amount }),
  }),
});

export const consoleLinkSchema = z.object({ path: z.string().regex(/^\/\?code=[A-Za-z0-9_-]{8,128}$/) });

// The schemas describe exactly the shared types (a field added to one must be added to the other).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const summaryMatches: Same<z.infer<typeof rigSummarySchema>, RigSummary> = true;
const usageMatches: Same<z.infer<typeof rigUsageSchema>, RigUsage> = true;
void summaryMatches;
void usageMatches;
