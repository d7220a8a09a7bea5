// The platform clients against a stand-in of the platform API (fixtures shaped as HUB-PROTOCOL.md and
// the Go types say): payout = provider_* when present else list; 5 min / 2 min caching; the last good
// figures stay, marked stale, through every kind of bad answer, with the error in the log.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryLog, type AgentLog } from '../../../src/core/base/log';
import { PLATFORM_TIMEOUT_MS, apiBase } from '../../../src/core/platform/get-json';
import { NetworkRates, RATES_TTL_MS } from '../../../src/core/platform/rates';
import { ProviderStatsClient, STATS_TTL_MS } from '../../../src/core/platform/stats';
import { ME_STATS, MODEL_DEMAND, PlatformApi, type RouteBehaviour } from '../../support/platform-api';
import { freePort, tempHome } from '../../support/stack';

const KEY = 'sk-prov-platform-test';
const DEMAND = '/api/v1/stats/model-demand';
const STATS = '/api/v1/provider/me/stats';

let api: PlatformApi;
let log: AgentLog;
let home: string;
let clock: number;
const now = (): number => clock;

beforeEach(async () => {
  api = await PlatformApi.start(KEY);
  log = memoryLog();
  home = tempHome('swan-platform-');
  clock = Date.parse('2026-12-01T09:00:00Z');
});
afterEach(async () => {
  await api.close();
  fs.rmSync(home, { recursive: true, force: true });
});

function rates(o: { url?: string; timeoutMs?: number } = {}): NetworkRates {
  return new NetworkRates({
    serviceUrl: () => o.url ?? api.url,
    log: log.child('earnings'),
    now,
    cacheFile: path.join(home, 'rates.json'),
    timeoutMs: o.timeoutMs ?? 2000,
  });
}

const warnings = (): string[] => log.entries(500, 'warn').map((e) => e.msg);

describe('network rates (model-demand)', () => {
  it('pays provider_*_price when present, else the list price; 10 s timeout by default; /api/v1 base', async () => {
    expect(PLATFORM_TIMEOUT_MS).toBe(10_000);
    expect(apiBase('https://api.swanchain.io/')).toBe('https://api.swanchain.io/api/v1');
    const r = rates();
    const v = await r.get();
    expect(v).toMatchObject({ stale: false, asOf: clock });
    expect(r.rateMap().get('openai/gpt-5.4')).toEqual({ inputPerM: 1.8, outputPerM: 10.8 });
    expect(r.rateMap().get('legacy/model')).toEqual({ inputPerM: 0.5, outputPerM: 1.5 });
    expect(v.value?.find((m) => m.modelId === 'openai/gpt-5.4')).toMatchObject({ listInputPerM: 2, listOutputPerM: 12, tier: 'standard' });
  });

  it('is cached 5 minutes: one upstream request per 5 minutes however often it is read', async () => {
    const r = rates();
    await r.get();
    clock += RATES_TTL_MS - 1;
    await r.get();
    await r.get();
    expect(api.count(DEMAND)).toBe(1);
    clock += 2;
    await r.get();
    expect(api.count(DEMAND)).toBe(2);
  });

  const bad: Array<[string, RouteBehaviour | 'down', RegExp]> = [
    ['HTTP 503', { kind: 'status', status: 503, body: 'upstream down' }, /HTTP 503/],
    ['code != 0', { kind: 'json', body: { code: 5001, message: 'maintenance', data: null } }, /code 5001 \(maintenance\)/],
    ['malformed JSON', { kind: 'raw', text: '{"code":0,"data":{"models":[' }, /not JSON/],
    ['wrong shape', { kind: 'json', body: { code: 0, data: { models: [{ model_id: 'x', input_price: 'free' }] } } }, /malformed/],
    [
      'negative rate',
      { kind: 'json', body: { code: 0, data: { models: [{ model_id: 'x', input_price: 1, output_price: 1, provider_input_price: -0.5 }] } } },
      /rate of -0.5/,
    ],
    ['absurd rate', { kind: 'json', body: { code: 0, data: { models: [{ model_id: 'x', input_price: 1, output_price: 5e6 }] } } }, /rate of 5000000/],
    ['slow (no answer in time)', { kind: 'hang' }, /no answer within 0.3 s/],
    ['down', 'down', /could not reach/],
  ];
  for (const [name, behaviour, error] of bad) {
    it(`keeps the last good rates, marked stale, when the platform is ${name}`, async () => {
      const deadPort = await freePort();
      let url = api.url;
      const r = new NetworkRates({ serviceUrl: () => url, log: log.child('earnings'), now, timeoutMs: 300 });
      await r.get();
      const good = r.rateMap();
      if (behaviour === 'down') url = `http://127.0.0.1:${deadPort}`;
      else api.routes[DEMAND] = behaviour;
      clock += RATES_TTL_MS + 1;
      const v = await r.get();
      expect(v.stale).toBe(true);
      expect(v.error).toMatch(error);
      expect(v.asOf).toBe(clock - RATES_TTL_MS - 1);
      expect(r.rateMap()).toEqual(good);
      expect(warnings().some((m) => error.test(m) && /marked stale/.test(m))).toBe(true);
      // Retried after 30 s, not on every read; recovers when the platform answers well again.
      api.routes[DEMAND] = { kind: 'json', body: MODEL_DEMAND };
      url = api.url;
      const before = api.count(DEMAND);
      await r.get();
      expect(api.count(DEMAND)).toBe(before);
      clock += 30_001;
      expect(await r.get()).toMatchObject({ stale: false, asOf: clock });
    });
  }

  it('a restart while the platform is down still has the last good rates, marked stale ("as of" kept)', async () => {
    await rates().get();
    const asOf = clock;
    api.routes[DEMAND] = { kind: 'status', status: 502 };
    clock += 60_000;
    const r = rates();
    expect(r.view()).toMatchObject({ stale: true, asOf });
    expect(r.rateMap().get('openai/gpt-5.4')).toEqual({ inputPerM: 1.8, outputPerM: 10.8 });
    expect((fs.statSync(path.join(home, 'rates.json')).mode & 0o777).toString(8)).toBe('600');
    await r.get();
    expect(r.view()).toMatchObject({ stale: true, asOf, error: expect.stringMatching(/HTTP 502/) });
  });

  it('a slow platform never blocks: a read during a fetch shares it', async () => {
    api.routes[DEMAND] = { kind: 'json', body: MODEL_DEMAND, delayMs: 150 };
    const r = rates();
    const [a, b] = await Promise.all([r.get(), r.get()]);
    expect(a).toEqual(b);
    expect(api.count(DEMAND)).toBe(1);
  });
});

describe('the platform record (provider/me/stats)', () => {
  function client(key = KEY): ProviderStatsClient {
    return new ProviderStatsClient({ serviceUrl: () => api.url, providerKey: () => key, log: log.child('earnings'), now, timeoutMs: 300 });
  }

  it('reads the wrapped and the bare form with the Bearer key, cached 2 minutes', async () => {
    const c = client();
    const v = await c.get();
    expect(v.value).toEqual({
      totalInferences: 120,
      successfulInferences: 117,
      failedInferences: 3,
      totalInputTokens: 24_000,
      totalOutputTokens: 36_000,
      totalTokens: 60_000,
      totalEarningsUsd: 0.4321,
      uptime7dPercent: 97.5,
      lastConnected: '2026-11-30T22:10:00Z',
    });
    expect(api.hits.find((h) => h.path === STATS)?.auth).toBe(`Bearer ${KEY}`);
    api.routes[STATS] = { kind: 'json', body: { ...ME_STATS, total_inferences: 121 } };
    clock += STATS_TTL_MS - 1;
    expect((await c.get()).value?.totalInferences).toBe(120);
    clock += 2;
    expect((await c.get()).value?.totalInferences).toBe(121);
  });

  it('a refused key, a negative count or an uptime over 100 %: last good figures stay, stale, error logged', async () => {
    const c = client();
    await c.get();
    for (const [route, error] of [
      [{ kind: 'json', body: { data: { ...ME_STATS, total_inferences: -4 } } }, /malformed \(total_inferences/],
      [{ kind: 'json', body: { ...ME_STATS, uptime_7d_percent: 140 } }, /malformed \(uptime_7d_percent/],
      [{ kind: 'status', status: 401 }, /refused the provider key \(HTTP 401\)/],
    ] as Array<[RouteBehaviour, RegExp]>) {
      api.routes[STATS] = route;
      clock += 31_000 + STATS_TTL_MS;
      const v = await c.get();
      expect(v).toMatchObject({ stale: true, error: expect.stringMatching(error) });
      expect(v.value?.totalInferences).toBe(120);
    }
    expect(warnings().filter((m) => /provider\/me\/stats/.test(m)).length).toBeGreaterThanOrEqual(3);
  });

  it('no key: says so and does not call the platform', async () => {
    const v = await client('').get();
    expect(v).toMatchObject({ value: null, stale: false, error: 'no provider key is configured' });
    expect(api.count(STATS)).toBe(0);
  });
});
