// LedgerBatch: requests ending in one turn are committed in one transaction after it, and committed()
// (what the relay awaits before a final message) settles only once their rows are in the ledger file.
import { describe, expect, it, vi } from 'vitest';
import type { Ledger } from '../../../src/core/ledger/ledger';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { COMMIT_GAP_MS, LedgerBatch } from '../../../src/core/agent/ledger-batch';
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

  it(`commits at most once per gap (${COMMIT_GAP_MS} ms by default): requests ending over the next turns within it share one commit`, async () => {
    const batch = new LedgerBatch(ledger, 200); // wide enough that a slow machine cannot end it between two turns
    batch.queue(rec(Date.now()));
    await batch.committed();
    const many = vi.spyOn(ledger, 'recordBatch');
    const one = vi.spyOn(ledger, 'record');
    batch.queue(rec(Date.now()));
    await nextTurn();
    batch.queue(rec(Date.now())); // a later turn, still within the gap
    await batch.committed();
    expect(one).not.toHaveBeenCalled();
    expect(many).toHaveBeenCalledTimes(1);
    expect(many.mock.calls[0]![0]).toHaveLength(2);
    expect(ledger.recent(10)).toHaveLength(3);
  });
});
