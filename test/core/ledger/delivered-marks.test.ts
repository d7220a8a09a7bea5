// Delivered marks (a hub request's last message reached the link) are written in the transaction of the
// next rows inserted, or on their own after a quarter of a second without one, and before any read;
// until written a row reads as undelivered from other connections, the safe side; a write that fails keeps
// them for the next one that works.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryLog } from '../../../src/core/log';
import { Ledger } from '../../../src/core/ledger/ledger';
import { ledgerPerTest, rec, tempDir } from '../../support/ledger/helpers';

let ledger: Ledger;
ledgerPerTest((l) => (ledger = l));
afterEach(() => {
  vi.useRealTimers();
});

/** The delivered column as another connection reads it from the file (no read through the ledger). */
function deliveredOnDisk(requestId: string, file = ledger.file): number | undefined {
  const db = new Database(file, { readonly: true });
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

  it('a commit that fails keeps them, and they are written once the database works again', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file, { log: memoryLog().child('ledger'), busyTimeoutMs: 20, retryMinMs: 10, retryMaxMs: 50 });
    const other = new Database(file);
    try {
      l.record(rec(T0, { requestId: 'a', awaitingHub: true }));
      l.markDelivered('a');
      other.exec('BEGIN EXCLUSIVE');
      l.record(rec(T0 + 1, { requestId: 'b' })); // its transaction, which carries a's mark, fails: locked
      expect(l.health()).toMatchObject({ ok: false, pending: 1 });
      vi.advanceTimersByTime(300); // the marks' own write (after 250 ms) and the retries fail too
      other.exec('COMMIT');
      vi.advanceTimersByTime(1000); // a retry writes the held row and the kept mark
      expect(l.health()).toMatchObject({ ok: true, pending: 0 });
      expect(deliveredOnDisk('a', file)).toBe(1);
      expect(deliveredOnDisk('b', file)).toBe(1);
    } finally {
      other.close();
      l.close();
      cleanup();
    }
  });
});
