// LedgerBatch: requests ending in one turn are committed in one transaction after it, committed() (what
// the relay awaits before a final message) settles only once their rows are in the ledger file, and the
// delivered marks of one turn are written together after it.
import { describe, expect, it, vi } from 'vitest';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LedgerBatch } from '../../../src/core/accounting/ledger-batch';
import { ledgerPerTest, rec } from '../../support/ledger/helpers';

let ledger: Ledger;
ledgerPerTest((l) => (ledger = l));

describe('LedgerBatch', () => {
  it('commits the records of one turn in one transaction, before committed() settles', async () => {
    const batch = new LedgerBatch(ledger);
    const many = vi.spyOn(ledger, 'recordBatch');
    const one = vi.spyOn(ledger, 'record');
    const now = Date.now();
    for (let i = 0; i < 3; i++) batch.queue(rec(now));
    const committed = batch.committed();
    expect(committed).toBeInstanceOf(Promise);
    expect(ledger.recent(10)).toHaveLength(0); // not committed inline
    let rowsWhenSettled = -1;
    await committed!.then(() => (rowsWhenSettled = ledger.recent(10).length));
    expect(rowsWhenSettled).toBe(3);
    expect(many).toHaveBeenCalledTimes(1);
    expect(one).not.toHaveBeenCalled();
  });

  it('has nothing to wait for when nothing is queued, and a new batch after a flush', async () => {
    const batch = new LedgerBatch(ledger);
    expect(batch.committed()).toBeUndefined();
    batch.queue(rec(Date.now()));
    await batch.committed();
    expect(batch.committed()).toBeUndefined();
    batch.queue(rec(Date.now()));
    const second = batch.committed();
    expect(second).toBeInstanceOf(Promise);
    await second;
    expect(ledger.recent(10)).toHaveLength(2);
  });

  it('settles committed() when flush() commits inline (shutdown)', async () => {
    const batch = new LedgerBatch(ledger);
    batch.queue(rec(Date.now()));
    const committed = batch.committed();
    batch.flush();
    expect(ledger.recent(10)).toHaveLength(1);
    await committed;
  });

  it('marks the rows whose finals reached the link delivered, together, after the turn', async () => {
    const batch = new LedgerBatch(ledger);
    const now = Date.now();
    batch.queue(rec(now, { requestId: 'a', awaitingHub: true }));
    batch.queue(rec(now, { requestId: 'b', awaitingHub: true }));
    await batch.committed();
    const marks = vi.spyOn(ledger, 'markDelivered');
    batch.markDelivered('a');
    batch.markDelivered('b');
    expect(ledger.hubLifetime().undelivered.requests).toBe(2);
    await nextTurn();
    expect(marks).toHaveBeenCalledTimes(1);
    expect(marks).toHaveBeenCalledWith('a', 'b');
    expect(ledger.hubLifetime().undelivered.requests).toBe(0);
  });
});
