// The sums across rigs: live figures of rigs that answer, the last known ones of those that do not
// (counted as stale), and the platform's record counted once per provider key.
import { describe, expect, it } from 'vitest';
import { fleetTotals, fleetUsage } from '../../../src/core/fleet/fleet-reader';
import { keyFingerprint } from '../../../src/core/fleet/rig-figures';
import type { FleetRigView, FleetUsageRig, RigSummary, RigUsage } from '../../../src/shared/fleet';

const t = (requests: number, tokensOut: number, earnings = 0) => ({ requests, errors: 0, tokensIn: requests * 5, tokensOut, earnings });

function summary(nodeId: string, requests: number, connected = true, verdict: string | null = connected ? 'serving' : 'stopped'): RigSummary {
  return {
    api: 1,
    nodeId,
    nodeName: nodeId,
    version: '0.1.0',
    at: 1,
    access: 'read',
    link: { state: connected ? 'connected' : 'backoff', since: 1 },
    paused: false,
    models: [
      { id: `m-${nodeId}`, enabled: true, health: 'healthy', inFlight: 1, queued: 0 },
      { id: 'shared', enabled: true, health: 'healthy', inFlight: 0, queued: 0 },
    ],
    gpus: [{ index: 0, model: 'GPU', vramTotalMb: 1, utilization: null, vramUsedMb: null, temperatureC: null, powerW: null }],
    gpuMetrics: true,
    today: t(requests, requests * 10, requests / 100),
    month: t(requests * 3, requests * 30),
    earningsEnabled: true,
    alerts: [],
    ...(verdict ? { verdict: { state: verdict, tone: verdict === 'serving' ? 'ok' : 'warn', label: verdict, headline: verdict, codes: [] } } : {}),
  };
}

function rig(id: string, status: FleetRigView['status'], s?: RigSummary): FleetRigView {
  return { id, self: id === 'self', url: '', label: id, status, since: 1, insecure: false, addedAt: 1, ...(s ? { summary: s } : {}) };
}

describe('fleetTotals', () => {
  it("sums every rig with figures, counts the unreachable ones' last figures as stale, and only live ones as serving", () => {
    const totals = fleetTotals([
      rig('self', 'ok', summary('a', 2)),
      rig('b', 'ok', summary('b', 3, false)),
      rig('c', 'unreachable', summary('c', 4)),
      rig('d', 'pending'),
    ]);
    expect(totals).toMatchObject({ rigs: 4, reachable: 2, serving: 1, gpus: 3, models: 4, inFlight: 2, stale: 1 });
    expect(totals.today).toEqual({ requests: 9, errors: 0, tokensIn: 45, tokensOut: 90, earnings: 0.09 });
    expect(totals.month.requests).toBe(27);
  });

  it('counts a rig as serving by its own verdict, never by its link (issue 40)', () => {
    const notRouted = rig('self', 'ok', summary('a', 1, true, 'not_routable'));
    const older = rig('b', 'ok', summary('b', 1, true, null));
    const serving = rig('c', 'ok', summary('c', 1, true, 'serving'));
    expect(fleetTotals([notRouted, older, serving]).serving).toBe(1);
  });
});

describe('fleetUsage', () => {
  const usage = (nodeId: string, requests: number, key: string, platformRequests: number | null): RigUsage => ({
    api: 1,
    nodeId,
    nodeName: nodeId,
    at: 1,
    today: t(requests, 1),
    last7: t(requests, 1),
    last30: t(requests, 1),
    month: t(requests, 1),
    perModel30: [],
    earningsEnabled: true,
    platform: {
      value:
        platformRequests === null
          ? null
          : {
              totalInferences: platformRequests,
              successfulInferences: platformRequests,
              failedInferences: 0,
              totalInputTokens: 0,
              totalOutputTokens: 0,
              totalTokens: 10,
              totalEarningsUsd: 1,
              uptime7dPercent: 99,
              lastConnected: '',
            },
      asOf: platformRequests === null ? null : 1,
      stale: false,
    },
    local: { requests, failed: 0, tokensIn: 0, tokensOut: 0, earnings: 0, firstAt: null, undelivered: { requests: 0, tokensIn: 0, tokensOut: 0, earnings: 0 } },
    providerKeyId: keyFingerprint(key),
  });
  it("sums the ledgers of the rigs that answered, and the platform's record once per provider key", () => {
    const rigs: FleetUsageRig[] = [
      { id: 'self', self: true, label: 'a', status: 'ok', usage: usage('a', 2, 'key-one', 100) },
      { id: 'b', self: false, label: 'b', status: 'ok', usage: usage('b', 3, 'key-one', 100) },
      { id: 'c', self: false, label: 'c', status: 'ok', usage: usage('c', 4, 'key-two', 40) },
      { id: 'd', self: false, label: 'd', status: 'unreachable', error: 'gone' },
      { id: 'e', self: false, label: 'e', status: 'ok', usage: usage('e', 1, 'key-three', null) },
    ];
    const v = fleetUsage(rigs, 5);
    expect(v.totals.today.requests).toBe(10);
    expect(v.platform).toEqual({ providers: 2, rigs: 3, totalInferences: 140, totalTokens: 20, totalEarningsUsd: 2 });
  });

  it('fingerprints a key without giving it away', () => {
    expect(keyFingerprint('sk-prov-secret')).toMatch(/^[0-9a-f]{12}$/);
    expect(keyFingerprint('sk-prov-secret')).not.toContain('secret');
    expect(keyFingerprint('')).toBeNull();
  });
});
