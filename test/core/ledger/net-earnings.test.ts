// Rates from the network applied per row (the owner's price only where the network does not price
// the model), and what you keep: GPU energy from recorded power samples, shared by the requests
// running in each slice of time, times the electricity price; net = earnings − cost. Every expected
// figure below is worked out by hand in the comments.
import { describe, expect, it } from 'vitest';
import { CSV_HEADER } from '../../../src/core/ledger/csv';
import { EnergyMeter, samplePowerW } from '../../../src/core/ledger/energy-meter';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { ledgerPerTest, parseCsv, rec } from '../../support/ledger/helpers';

let ledger: Ledger;
const fx = ledgerPerTest((l) => (ledger = l));

const T0 = Date.parse('2026-11-30T10:00:00Z');
const S = 1000;

describe('network rates on the ledger', () => {
  it('the network rate wins; the owner price applies only to models the network does not price; the rate is kept per row', () => {
    ledger.setPrice('*', 100, 100, 0); // the owner's estimate
    ledger.setNetworkRates(new Map([['openai/gpt-5.4', { inputPerM: 1.8, outputPerM: 10.8 }]]));
    ledger.record(rec(T0, { requestId: 'net', model: 'openai/gpt-5.4', tokensIn: 1000, tokensOut: 2000 }));
    ledger.record(rec(T0 + 1, { requestId: 'own', model: 'my/finetune', tokensIn: 1000, tokensOut: 2000 }));
    // A later rate change does not touch rows already written.
    ledger.setNetworkRates(new Map([['openai/gpt-5.4', { inputPerM: 3, outputPerM: 30 }]]));
    ledger.record(rec(T0 + 2, { requestId: 'net2', model: 'openai/gpt-5.4', tokensIn: 1000, tokensOut: 2000 }));
    const rows = parseCsv(ledger.exportCsv(0, T0 + 10));
    const col = (r: string[], name: (typeof CSV_HEADER)[number]): string => r[CSV_HEADER.indexOf(name)]!;
    const byId = new Map(rows.slice(1).map((r) => [col(r, 'request_id'), r]));
    // 1000 × 1.8 / 1e6 + 2000 × 10.8 / 1e6 = 0.0018 + 0.0216 = 0.0234
    expect(['input_price_per_m', 'output_price_per_m', 'rate_source', 'earnings'].map((c) => col(byId.get('net')!, c as never))).toEqual([
      '1.8',
      '10.8',
      'network',
      '0.0234',
    ]);
    // 3000 × 100 / 1e6 = 0.3
    expect(['input_price_per_m', 'output_price_per_m', 'rate_source', 'earnings'].map((c) => col(byId.get('own')!, c as never))).toEqual([
      '100',
      '100',
      'override',
      '0.3',
    ]);
    // 1000 × 3 / 1e6 + 2000 × 30 / 1e6 = 0.063
    expect(col(byId.get('net2')!, 'earnings')).toBe('0.063');
    expect(ledger.totals(0, T0 + 10).earnings).toBeCloseTo(0.0234 + 0.3 + 0.063, 12);
  });
});

describe('what you keep', () => {
  it('energy from power samples shared by running requests × electricity price = cost; net = earnings − cost', () => {
    // Power 100 W from t=0, 300 W from 1 s, 200 W from 3 s. A runs 0.5..2.5 s, B runs 1.5..3.5 s.
    const m = new EnergyMeter();
    m.sample(T0, samplePowerW({ available: true, devices: [{ powerW: 60 }, { powerW: 40 }] })); // two GPUs: 100 W
    m.begin('A', T0 + 0.5 * S);
    m.sample(T0 + 1 * S, 300);
    m.begin('B', T0 + 1.5 * S);
    const a = m.end('A', T0 + 2.5 * S);
    m.sample(T0 + 3 * S, 200);
    const b = m.end('B', T0 + 3.5 * S);
    // A: 0.5 s × 100 W (alone) + 0.5 s × 300 W (alone) + 1 s × 300 W / 2 (shared) = 50 + 150 + 150 = 350 J
    // B: 1 s × 300 W / 2 + 0.5 s × 300 W (alone) + 0.5 s × 200 W (alone) = 150 + 150 + 100 = 400 J
    expect(a).toBeCloseTo(350 / 3600, 12);
    expect(b).toBeCloseTo(400 / 3600, 12);
    expect(m.idleWh).toBeCloseTo(50 / 3600, 12); // 0..0.5 s at 100 W with nothing running

    ledger.setNetworkRates(new Map([['m', { inputPerM: 2, outputPerM: 10 }]]));
    ledger.setElectricityPrice({ perKwh: 0.25, currency: 'EUR', usdPerUnit: 1.2 }); // 0.30 USD per kWh
    ledger.record(rec(T0 + 2.5 * S, { requestId: 'A', model: 'm', tokensIn: 100, tokensOut: 50, energyWh: a }));
    ledger.record(rec(T0 + 3.5 * S, { requestId: 'B', model: 'm', tokensIn: 200, tokensOut: 100, energyWh: b }));
    // A earns 100 × 2 / 1e6 + 50 × 10 / 1e6 = 0.0007 USD; B earns 0.0014 USD.
    // Cost: 750 J = 750 / 3.6e6 kWh × 0.30 USD = 0.0000625 USD. Net = 0.0021 − 0.0000625 = 0.0020375.
    const t = ledger.totals(T0, T0 + 10 * S);
    expect(t.earnings).toBeCloseTo(0.0021, 12);
    expect(t.energyWh).toBeCloseTo(750 / 3600, 12);
    expect(t.cost).toBeCloseTo(0.0000625, 12);
    expect(t.earnings - t.cost!).toBeCloseTo(0.0020375, 12);
    const model = ledger.report(T0 - 3600 * S, T0 + 3600 * S, 'hour').perModel[0]!;
    expect(model.cost).toBeCloseTo(0.0000625, 12);
    const rows = parseCsv(ledger.exportCsv(0, T0 + 10 * S));
    const col = (r: string[], name: (typeof CSV_HEADER)[number]): string => r[CSV_HEADER.indexOf(name)]!;
    const rowA = rows.find((r) => col(r, 'request_id') === 'A')!;
    // A: 350 J → 350 / 3.6e6 × 0.30 = 0.0000291666… USD; net 0.0007 − 0.0000291667 = 0.0006708333
    expect(Number(col(rowA, 'cost'))).toBeCloseTo(0.0000291667, 9);
    expect(Number(col(rowA, 'net'))).toBeCloseTo(0.0006708333, 9);
    expect(Number(col(rowA, 'energy_wh'))).toBeCloseTo(0.097222222, 9);
  });

  it('no power samples: no energy, no cost (never a guess); power holds at most 10 s after the last sample', () => {
    const m = new EnergyMeter(10_000);
    m.begin('x', T0);
    expect(m.end('x', T0 + S)).toBeNull();
    m.sample(T0 + 2 * S, 100);
    m.begin('y', T0 + 2 * S);
    // Held 10 s, then unknown: 10 s × 100 W = 1000 J, not 60 s' worth.
    expect(m.end('y', T0 + 62 * S)).toBeCloseTo(1000 / 3600, 12);
    m.sample(T0 + 63 * S, null); // GPU tool unavailable
    m.begin('z', T0 + 63 * S);
    expect(m.end('z', T0 + 64 * S)).toBeNull();
  });

  it('an electricity price is validated and survives a reopen', () => {
    expect(() => ledger.setElectricityPrice({ perKwh: -1, currency: 'USD', usdPerUnit: 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_electricity_price', field: 'perKwh' }),
    );
    expect(() => ledger.setElectricityPrice({ perKwh: 0.2, currency: 'euro', usdPerUnit: 1 })).toThrow(
      expect.objectContaining({ code: 'invalid_electricity_price', field: 'currency' }),
    );
    ledger.setElectricityPrice({ perKwh: 0.2, currency: 'USD', usdPerUnit: 1 });
    fx.reopen();
    expect(ledger.electricityPrice()).toEqual({ perKwh: 0.2, currency: 'USD', usdPerUnit: 1 });
  });

  it('awaitingHub rows are undelivered until markDelivered; lifetime totals say how many the hub never saw end', async () => {
    ledger.record(rec(T0, { requestId: 'told', awaitingHub: true }));
    ledger.record(rec(T0 + 1, { requestId: 'lost', awaitingHub: true, tokensIn: 7, tokensOut: 3 }));
    ledger.record(rec(T0 + 2, { requestId: 'mine', source: 'local' }));
    ledger.markDelivered('told');
    await new Promise((r) => setImmediate(r));
    const life = ledger.hubLifetime();
    expect(life).toMatchObject({ requests: 2, firstAt: T0, undelivered: { requests: 1, tokensIn: 7, tokensOut: 3 } });
  });
});

describe('per month', () => {
  it('month buckets start at local month starts and sum the rows in them, cost and net included', () => {
    const jan = new Date(2026, 0, 15).getTime();
    const feb = new Date(2026, 1, 3).getTime();
    ledger.setNetworkRates(new Map([['m', { inputPerM: 1, outputPerM: 1 }]]));
    ledger.setElectricityPrice({ perKwh: 1, currency: 'USD', usdPerUnit: 1 });
    ledger.record(rec(jan, { model: 'm', tokensIn: 500_000, tokensOut: 500_000, energyWh: 100 })); // earns 1, costs 0.1
    ledger.record(rec(feb, { model: 'm', tokensIn: 1_000_000, tokensOut: 1_000_000, energyWh: 500 })); // earns 2, costs 0.5
    const r = ledger.report(new Date(2026, 0, 1).getTime(), new Date(2026, 2, 1).getTime(), 'month');
    expect(r.buckets.map((b) => [b.start, b.requests, b.earnings, b.cost])).toEqual([
      [new Date(2026, 0, 1).getTime(), 1, 1, expect.closeTo(0.1, 12)],
      [new Date(2026, 1, 1).getTime(), 1, 2, expect.closeTo(0.5, 12)],
    ]);
  });
});

describe('delivery marks on close', () => {
  it('a mark made in the last turn before close is written', () => {
    ledger.record(rec(T0, { requestId: 'last', awaitingHub: true }));
    ledger.markDelivered('last');
    fx.reopen();
    expect(ledger.hubLifetime().undelivered.requests).toBe(0);
  });
});
