// The network's own records (the Go provider's platform_data.go): per model what the platform holds
// (provider/me → id, providers/{id}/models/details) and the settled earnings over time, beside the local
// estimate with the difference explained. Against the platform stand-in; bounded and validated.
import { afterEach, describe, expect, it } from 'vitest';
import { ModelDetailsReader, parseModelDetails } from '../../../src/core/platform/model-details';
import { explainDifference, fetchEarningsHistory, parseEarningsHistory } from '../../../src/core/platform/earnings-history';
import { PlatformApi } from '../../support/platform-api';

const KEY = 'sk-prov-records-1234567890';
let api: PlatformApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

describe("the platform's model records", () => {
  it('reads the provider id once, then each model as the platform holds it (offered, available, failures, dispatch failures, throughput, last request)', async () => {
    api = await PlatformApi.start(KEY);
    const reader = new ModelDetailsReader({ serviceUrl: () => api!.url, providerKey: () => KEY });
    const r = await reader.fetch();
    expect(r).toEqual({
      ok: true,
      value: [
        expect.objectContaining({
          modelId: 'openai/gpt-5.4',
          offered: true,
          available: 1,
          capacity: 2,
          recentSuccesses: 40,
          recentFailures: 9,
          dispatchFailures: 3,
          throughput: 41.5,
          lastRequestAt: Date.parse('2026-11-30T22:09:00Z'),
        }),
        expect.objectContaining({ modelId: 'legacy/model', offered: false, dispatchFailures: 0 }),
      ],
    });
    await reader.fetch();
    expect(api.count('/api/v1/provider/me')).toBe(1);
    expect(api.count('/api/v1/providers/p1/models/details')).toBe(2);
    expect(api.hits.every((h) => h.auth === `Bearer ${KEY}`)).toBe(true);
  });

  it('says why when it cannot: a refused key, a catalogue that answers 404, a malformed or oversized answer', async () => {
    api = await PlatformApi.start(KEY);
    expect(await new ModelDetailsReader({ serviceUrl: () => api!.url, providerKey: () => 'wrong' }).fetch()).toEqual({
      ok: false,
      error: 'the platform refused the provider key (HTTP 401)',
    });
    api.routes['/api/v1/providers/p1/models/details'] = { kind: 'status', status: 404 };
    expect(await new ModelDetailsReader({ serviceUrl: () => api!.url, providerKey: () => KEY }).fetch()).toMatchObject({
      ok: false,
      error: expect.stringContaining('HTTP 404'),
    });
    expect(parseModelDetails({ models: [{ model_id: 'x', offered: 'yes' }] })).toMatchObject({ ok: false });
    expect(parseModelDetails({ models: Array.from({ length: 501 }, (_, i) => ({ model_id: `m${i}` })) })).toMatchObject({ ok: false });
    expect(parseModelDetails({ data: { models: null } })).toEqual({ ok: true, value: [] });
  });
});

describe('settled earnings', () => {
  it('reads the history for a span (24h in hourly buckets), pay-as-you-go and subscription apart', async () => {
    api = await PlatformApi.start(KEY);
    const r = await fetchEarningsHistory({ serviceUrl: api.url, providerKey: KEY, span: '24h' });
    expect(api.hits.at(-1)).toMatchObject({ path: '/api/v1/provider/me/earnings/history', query: 'duration=24h&bucket=1h' });
    expect(r).toMatchObject({
      ok: true,
      value: { totalUsd: 0.4321, payAsYouGoUsd: 0.3321, subscriptionUsd: 0.1, proRate: [{ period: '2026-11', ratio: 0.5, settled: false }] },
    });
    if (!r.ok) return;
    expect(r.value.points.map((p) => p.usd)).toEqual([0.3, 0.1321]);
  });

  it('explains the difference from the local estimate: subscription the ledger cannot see, a period not final, pay-as-you-go counted apart', () => {
    const settled = parseEarningsHistory(
      { total_usd: 0.4321, total_pay_as_you_go_usd: 0.3321, total_subscription_usd: 0.1, subscription_pro_rate: { '2026-11': { ratio: 0.5 } } },
      '7d',
    );
    if (!settled.ok) throw new Error(settled.error);
    const d = explainDifference(settled.value, 0.3);
    expect(d.differenceUsd).toBeCloseTo(0.1321, 6);
    expect(d.explanation).toMatch(/subscription revenue/);
    expect(d.explanation).toMatch(/2026-11 is not final yet/);
    expect(d.explanation).toMatch(/pay-as-you-go differs by 0\.0321/);
    const same = parseEarningsHistory({ total_usd: 0.3, total_pay_as_you_go_usd: 0.3 }, '24h');
    if (!same.ok) throw new Error(same.error);
    expect(explainDifference(same.value, 0.3)).toEqual({ differenceUsd: 0, explanation: 'The platform settled what this machine estimated.' });
  });
});
