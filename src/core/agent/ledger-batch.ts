// Ledger commit batching. Requests that finish in the same turn of the event loop (a burst of streams
// ending together) are written in one transaction right after it, instead of one commit each while
// other streams wait. A record is written within that one turn of its request ending, and never after
// its last message to the hub: the relay calls flush() (beforeFinal) right before sending a stream_end
// or result, so the commit always precedes the send (test/integration/ledger/agent-crash.test.ts).
import type { UsageRecord } from '../../shared/types';
import type { Ledger } from '../ledger/ledger';

export class LedgerBatch {
  private readonly batch: UsageRecord[] = [];

  constructor(private readonly ledger: Ledger | undefined) {}

  queue(record: UsageRecord): void {
    if (!this.ledger) return;
    this.batch.push(record);
    if (this.batch.length > 1) return;
    setImmediate(() => this.flush());
  }

  /** Commits what is queued, now. */
  flush(): void {
    const batch = this.batch.splice(0);
    if (batch.length === 1) this.ledger?.record(batch[0]!);
    else if (batch.length > 1) this.ledger?.recordBatch(batch);
  }
}
