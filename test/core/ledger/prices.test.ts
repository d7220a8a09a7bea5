import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/core/ledger/ledger';
import { parseCsv, rec, tempDir, waitForHealth } from '../../support/ledger/helpers';

let dir: string;
let cleanup: () => void;
let ledger: Ledger | undefined;
const file = (): string => path.join(dir, 'ledger.sqlite');

beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => {
  ledger?.close();
  ledger = undefined;
  cleanup();
});

const T = Date.UTC(2025, 0, 1);
const H = 3_600_000;

describe('prices and earnings', () => {
  it('each request earns at the price in force when it finished; changes are rows, not overwrites', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('m', 1, 2, T); // $1 in / $2 out per 1M tokens
    ledger.setPrice('m', 10, 20, T + H);
    const at = (t: number, id: string): void => ledger!.record(rec(t, { requestId: id, model: 'm', tokensIn: 1_000_000, tokensOut: 500_000 }));
    at(T - 1, 'before');
    at(T, 'first');
    at(T + H - 1, 'first-last');
    at(T + H, 'second');
    const byId = Object.fromEntries(
      parseCsv(ledger.exportCsv(0, T + 2 * H))
        .slice(1)
        .map((r) => [r[0], Number(r[17])]),
    );
    expect(byId).toEqual({ before: 0, first: 2, 'first-last': 2, second: 20 });
    expect(ledger.totals(0, T + 2 * H).earnings).toBeCloseTo(24, 9);
    expect(ledger.prices()).toEqual([
      { model: 'm', inputPerM: 1, outputPerM: 2, effectiveFrom: T },
      { model: 'm', inputPerM: 10, outputPerM: 20, effectiveFrom: T + H },
    ]);
  });

  it('a model without its own price uses the "*" price; its own price wins even over a newer "*"', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('own', 1, 1, T);
    ledger.setPrice('*', 5, 5, T + 10);
    ledger.record(rec(T + 20, { model: 'own', tokensIn: 1_000_000, tokensOut: 0 }));
    ledger.record(rec(T + 20, { model: 'other', tokensIn: 1_000_000, tokensOut: 0 }));
    const per = Object.fromEntries(ledger.report(T, T + 100, 'hour').perModel.map((m) => [m.model, m.earnings]));
    expect(per).toEqual({ own: 1, other: 5 });
  });

  it('only successful hub requests earn; local use, errors, cancels and rejections do not', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('*', 1, 1, 0);
    const big = { tokensIn: 1_000_000, tokensOut: 0 };
    ledger.record(rec(T, { ...big }));
    ledger.record(rec(T, { ...big, source: 'local' }));
    ledger.record(rec(T, { ...big, status: 'error' }));
    ledger.record(rec(T, { ...big, status: 'cancelled' }));
    ledger.record(rec(T, { ...big, status: 'rejected' }));
    expect(ledger.totals(T, T + 1)).toMatchObject({ requests: 5, earnings: 1 });
  });

  it('stores earnings on the row when written: a back-dated price does not rewrite history', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('*', 1, 0, 0);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    ledger.setPrice('*', 3, 0, T - 1);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    expect(ledger.totals(T, T + 1).earnings).toBe(4);
  });

  it('earnings follow the hub flag, which survives a restart', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('*', 1, 0, 0);
    ledger.setEarningsEnabled(false);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    ledger.close();
    ledger = Ledger.open(file());
    expect(ledger.isEarningsEnabled()).toBe(false);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    ledger.setEarningsEnabled(true);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    expect(ledger.totals(T, T + 1)).toMatchObject({ requests: 3, earnings: 1 });
  });

  it('records held while the file was away earn under the stored flag and prices once it is back', async () => {
    ledger = Ledger.open(file());
    ledger.setPrice('*', 1, 0, 0);
    ledger.setEarningsEnabled(false);
    ledger.close();
    fs.renameSync(file(), `${file()}.away`);
    fs.mkdirSync(file()); // a folder where the file should be: cannot open
    ledger = Ledger.open(file(), { retryMinMs: 10, retryMaxMs: 50 });
    expect(ledger.health().ok).toBe(false);
    ledger.record(rec(T, { tokensIn: 1_000_000, tokensOut: 0 }));
    fs.rmdirSync(file());
    fs.renameSync(`${file()}.away`, file());
    await waitForHealth(ledger, (h) => h.ok && h.pending === 0);
    expect(ledger.isEarningsEnabled()).toBe(false);
    expect(ledger.totals(T, T + 1)).toMatchObject({ requests: 1, earnings: 0 });
  });

  it('prices survive a restart and keep applying by time', () => {
    ledger = Ledger.open(file());
    ledger.setPrice('m', 2, 0, T);
    ledger.close();
    ledger = Ledger.open(file());
    ledger.record(rec(T + 5, { model: 'm', tokensIn: 500_000, tokensOut: 0 }));
    expect(ledger.prices()).toHaveLength(1);
    expect(ledger.totals(T, T + 10).earnings).toBe(1);
  });

  it('refuses nonsense prices, naming the field at fault', () => {
    ledger = Ledger.open(file());
    expect(() => ledger!.setPrice('', 1, 1)).toThrow(expect.objectContaining({ code: 'invalid_price', field: 'model' }));
    expect(() => ledger!.setPrice('m', -1, 1)).toThrow(expect.objectContaining({ code: 'invalid_price', field: 'inputPerM' }));
    expect(() => ledger!.setPrice('m', 1, Number.NaN)).toThrow(expect.objectContaining({ code: 'invalid_price', field: 'outputPerM' }));
    expect(() => ledger!.setPrice('m', 1, 1, -5)).toThrow(expect.objectContaining({ code: 'invalid_price', field: 'at' }));
    expect(ledger.prices()).toEqual([]);
  });
});
