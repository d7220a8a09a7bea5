// Delivered marks (a hub request's last message reached the link) are written at once; until then a row
// reads as undelivered, the safe side; a mark the database cannot take is kept and written with the held
// rows once it works again.
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
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
  it('are written at once, and only for the request named', () => {
    ledger.record(rec(T0, { requestId: 'a', awaitingHub: true }));
    ledger.record(rec(T0 + 1, { requestId: 'b', awaitingHub: true }));
    expect(deliveredOnDisk('a')).toBe(0);
    ledger.markDelivered('a');
    expect(deliveredOnDisk('a')).toBe(1);
    expect(deliveredOnDisk('b')).toBe(0);
    expect(ledger.hubLifetime().undelivered.requests).toBe(1);
  });

  it('a mark the database refuses is kept, and written with the held rows once it works again', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { dir, cleanup } = tempDir();
    const file = path.join(dir, 'ledger.sqlite');
    const l = Ledger.open(file, { log: memoryLog().child('ledger'), busyTimeoutMs: 20, retryMinMs: 10, retryMaxMs: 50 });
    const other = new Database(file);
    try {
      l.record(rec(T0, { requestId: 'a', awaitingHub: true }));
      other.exec('BEGIN EXCLUSIVE');
      l.markDelivered('a'); // refused: locked
      l.record(rec(T0 + 1, { requestId: 'b' })); // held in memory while the database is failing
      expect(l.health()).toMatchObject({ ok: false, pending: 1 });
      vi.advanceTimersByTime(300); // the retries fail too
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
