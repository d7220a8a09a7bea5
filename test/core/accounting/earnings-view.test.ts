// Why the platform's record and this ledger differ: reasons that match what happened, and "agree" only
// when they do, to the micro-dollar.
import { describe, expect, it } from 'vitest';
import { explainDifference, zeroReason } from '../../../src/core/accounting/earnings-view';
import type { LocalLifetimeView, PlatformFigures, PlatformStatsView } from '../../../src/shared/views/usage';

const stats = (o: Partial<PlatformStatsView> = {}): PlatformFigures<PlatformStatsView> => ({
  value: {
    totalInferences: 2,
    successfulInferences: 2,
    failedInferences: 0,
    totalInputTokens: 10,
    totalOutputTokens: 20,
    totalTokens: 30,
    totalEarningsUsd: 0,
    uptime7dPercent: 100,
    lastConnected: '',
    ...o,
  },
  asOf: 1,
  stale: false,
});
const local = (o: Partial<LocalLifetimeView> = {}): LocalLifetimeView => ({
  requests: 2,
  failed: 0,
  tokensIn: 10,
  tokensOut: 20,
  earnings: 0,
  firstAt: 1,
  undelivered: { requests: 0, tokensIn: 0, tokensOut: 0, earnings: 0 },
  ...o,
});
const codes = (r: ReturnType<typeof explainDifference>) => r.reasons.map((x) => x.code);

describe('explainDifference', () => {
  it('agrees only when requests, failures, tokens and money are equal', () => {
    expect(codes(explainDifference(stats(), local()))).toEqual(['match']);
    expect(codes(explainDifference(stats({ totalEarningsUsd: 0.0000412 }), local({ earnings: 0.0000412 })))).toEqual(['match']);
  });

  it('a platform figure beside $0.00 here is not agreement: the ledger counted the requests unpaid', () => {
    const r = explainDifference(stats({ totalEarningsUsd: 0.00012 }), local());
    expect(codes(r)).toEqual(['local_unpaid']);
    expect(r.difference?.earningsUsd).toBeCloseTo(0.00012, 12);
  });

  it('tiny differences in money are still differences (rates), and token differences are said', () => {
    expect(codes(explainDifference(stats({ totalEarningsUsd: 0.000043 }), local({ earnings: 0.0000412 })))).toEqual(['rates_differ']);
    expect(codes(explainDifference(stats({ totalTokens: 31 }), local()))).toEqual(['tokens_differ']);
  });

  it('requests whose end never reached the hub are named as such; none is no reason', () => {
    const r = explainDifference(
      stats({ totalInferences: 1, totalTokens: 15 }),
      local({ undelivered: { requests: 1, tokensIn: 5, tokensOut: 10, earnings: 0 } }),
    );
    expect(codes(r)).toContain('undelivered');
    expect(r.reasons.find((x) => x.code === 'undelivered')?.text).toMatch(/never reached the hub/);
  });
});

describe('zeroReason', () => {
  it('says "not priced" only on the price list\'s word: a list never read is prices_unknown', () => {
    const base = { earnings: 0, requests: 3, enabled: true, anyPriced: false };
    expect(zeroReason({ ...base, pricesKnown: true })).toBe('no_priced_model');
    expect(zeroReason({ ...base, pricesKnown: false })).toBe('prices_unknown');
    expect(zeroReason({ ...base, anyPriced: true, pricesKnown: false })).toBe('no_paid_requests');
  });
});
