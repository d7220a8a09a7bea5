// Delivered marks (a hub request's last message reached the link) are written in the transaction of the
// next rows inserted, or on their own after a quarter of a second without one, and before any read;
// until written a row reads as undelivered from other connections, the safe side.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { ledgerPerTest, rec } from '../../support/ledger/helpers';

let ledger: Ledger;
ledgerPerTest((l) => (ledger = l));
afterEach(() => {
  vi.useRealTimers();
});

/** The delivered column as another connection reads it from the file (no read through the ledger). */
function deliveredOnDisk(requestId: string): number | undefined {
  const db = new Database(ledger.file, { readonly: true });
  try {
    return (db.prepare('SELECT delivered FROM usage WHERE request_id = ?').get(requestId) as { delivered: number } | undefined)?.delivered;
  } finally {
    db.close();
  }
}

const T0 = Date.UTC(2026, 11, 1, 12);

describe('delivered marks', () => {
  it('ride in the transaction of the next rows inserted', () => {
    ledger.record(rec(T0, { requestId: 'a', awaitingHub: true }));
    ledger.markDelivered('a');
    expect(deliveredOnDisk('a')).toBe(0); // not its own commit
    ledger.record(rec(T0 + 1, { requestId: 'b', awaitingHub: true }));
    expect(deliveredOnDisk('a')).toBe(1);
    expect(deliveredOnDisk('b')).toBe(0);
    ledger.markDelivered('b');
    ledger.recordBatch([rec(T0 + 2), rec(T0 + 3)]);
    expect(deliveredOnDisk('b')).toBe(1);
  });

  it('are written on their own after 250 ms without rows to ride with', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    ledger.record(rec(T0, { requestId: 'a', awaitingHub: true }));
    ledger.markDelivered('a');
    vi.advanceTimersByTime(249);
    expect(deliveredOnDisk('a')).toBe(0);
    vi.advanceTimersByTime(1);
    expect(deliveredOnDisk('a')).toBe(1);
  });

  it('are written before a read through the ledger, which sees them at once', () => {
    ledger.record(rec(T0, { requestId: 'a', awaitingHub: true }));
    ledger.markDelivered('a');
    expect(ledger.hubLifetime().undelivered.requests).toBe(0);
    expect(deliveredOnDisk('a')).toBe(1);
  });
});
