// The whole agent against the dev hub and a stand-in of the platform API: hub requests earn at the
// network's payout rate (the owner's price is ignored for a model the network prices), the overview
// puts the platform's record beside the local ledger with the difference explained, and the Today
// card gets a reason while earnings are zero.
import { afterEach, describe, expect, it } from 'vitest';
import type { EarningsOverview } from '../../../src/shared/views/usage';
import { PlatformApi, PROVIDER_STATUS_ACTIVE } from '../../support/platform-api';
import { call, logEntries, TEST_KEY, chat, readSse, registered, startStack, today, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
let api: PlatformApi | undefined;
afterEach(async () => {
  await stack?.close();
  await api?.close();
  stack = undefined;
  api = undefined;
});

const MODEL = 'meta-llama/Llama-3.1-8B-Instruct';

describe('earnings from the network', () => {
  it('earns at the network rate, shows the platform record beside the ledger, explains the difference', async () => {
    api = await PlatformApi.start(TEST_KEY);
    api.routes['/api/v1/stats/model-demand'] = {
      kind: 'json',
      body: {
        code: 0,
        data: { models: [{ model_id: MODEL, input_price: 0.2, output_price: 0.6, provider_input_price: 0.15, provider_output_price: 0.45, tier: 'standard' }] },
      },
    };
    stack = await startStack({ serviceUrl: api.url, engines: [{ models: [MODEL], mode: { generate: 40 }, promptTokens: 12 }] });
    await registered(stack);
    await until(
      async () => (await call(stack!.agent, 'earnings.overview', {})).pricing.some((p) => p.model === MODEL && p.source === 'network'),
      'network rates fetched',
    );
    expect(stack.agent.snapshot().todayEarningsReason).toBe('no_requests');
    await stack.agent.invoke('prices.set', { model: '*', inputPerM: 50, outputPerM: 50 }); // ignored: the network prices MODEL
    for (let i = 0; i < 3; i++) await readSse(await chat(stack.hub!, { model: MODEL, stream: true, messages: [{ role: 'user', content: `x${i}` }] }));
    await until(() => today(stack!.agent).requests === 3, 'three requests in the ledger');
    // Each: 12 × 0.15 / 1e6 + 40 × 0.45 / 1e6 = 0.0000018 + 0.000018 = 0.0000198 USD
    expect(today(stack.agent).earnings).toBeCloseTo(3 * 0.0000198, 12);
    expect(stack.agent.snapshot().todayEarningsReason).toBeUndefined();
    // Each request in the console carries what its ledger row was booked with.
    const views = await call(stack.agent, 'requests.list', {});
    expect(views.map((v) => v.earnings)).toEqual([expect.closeTo(0.0000198, 12), expect.closeTo(0.0000198, 12), expect.closeTo(0.0000198, 12)]);

    const o = (await stack.agent.invoke('earnings.overview', {})) as EarningsOverview;
    expect(o.pricing).toEqual([{ model: MODEL, source: 'network', inputPerM: 0.15, outputPerM: 0.45 }]);
    expect(o.rates).toMatchObject({ stale: false, value: [expect.objectContaining({ modelId: MODEL, inputPerM: 0.15, listInputPerM: 0.2 })] });
    expect(o.platform.value).toMatchObject({ totalInferences: 120, uptime7dPercent: 97.5 });
    expect(o.local).toMatchObject({ requests: 3, failed: 0, tokensIn: 36, tokensOut: 120, undelivered: { requests: 0 } });
    expect(o.difference).toEqual({ requests: 117, tokens: 60_000 - 156, earningsUsd: expect.closeTo(0.4321 - 3 * 0.0000198, 12) });
    expect(o.reasons.map((r) => r.code)).toEqual(['failed', 'ledger_age', 'rates_differ']);
    expect(o.recent.requests).toBe(3);

    // The platform goes down: the overview still answers at once with the last good figures, stale.
    api.routes['/api/v1/provider/me/stats'] = { kind: 'status', status: 503 };
    const stale = (await stack.agent.invoke('earnings.overview', { refresh: true })) as EarningsOverview;
    expect(stale.platform).toMatchObject({ stale: true, error: expect.stringMatching(/HTTP 503/), value: expect.objectContaining({ totalInferences: 120 }) });
    expect(stale.reasons[0]!.code).toBe('platform_stale');
    expect((await logEntries(stack.agent, 500, 'warn')).some((e) => /provider\/me\/stats\) unavailable: .*HTTP 503/.test(e.msg))).toBe(true);
    // Serving is not blocked by it.
    await readSse(await chat(stack.hub!, { model: MODEL, stream: true, messages: [{ role: 'user', content: 'y' }] }));
    await until(() => today(stack!.agent).requests === 4, 'served while the platform is down');
  });

  it('the Today reason: no priced model, then earnings not enabled', async () => {
    api = await PlatformApi.start(TEST_KEY);
    api.routes['/api/v1/stats/model-demand'] = { kind: 'json', body: { code: 0, data: { models: [] } } };
    stack = await startStack({ serviceUrl: api.url, engines: [{ models: [MODEL] }] });
    await registered(stack);
    await until(async () => (await call(stack!.agent, 'demand.list', {})).rates.asOf !== null, 'rates fetched');
    expect(stack.agent.snapshot().todayEarningsReason).toBe('no_priced_model');
    // The platform turns earnings off: the next provider-status check carries it to the ledger.
    api.routes['/api/v1/provider/status'] = { kind: 'json', body: { ...PROVIDER_STATUS_ACTIVE, earnings_enabled: false } };
    await call(stack.agent, 'providerStatus.refresh', {});
    expect(stack.agent.snapshot().todayEarningsReason).toBe('earnings_disabled');
    expect((await call(stack.agent, 'prices.list', {})).earningsEnabled).toBe(false);
  });
});
