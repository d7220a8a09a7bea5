// The ledger's writes for finished requests, one transaction per event-loop turn. A burst of streams ends
// within one turn (they were started and decoded together); one commit for all their rows, right after the
// turn, costs about what one row's commit does, where a commit each would hold the burst's last chunks
// behind every one of them. Commit before send: the relay's beforeFinal awaits committed() before a
// stream_end or result goes out, so a request's row is committed before its final message can leave the
// process (test/integration/ledger/agent-crash.test.ts). The delivered marks, made as those finals reach
// the hub link, are written the same way: together, after their turn.
import type { UsageRecord } from '../../shared/types';
import type { Ledger } from '../ledger/ledger';
import { TurnQueue } from '../base/turn-queue';

export class LedgerBatch {
  private readonly rows: TurnQueue<UsageRecord>;
  private readonly delivered: TurnQueue<string>;
  /** Settled by the flush that commits the current batch (made only when someone waits for it). */
  private waiting?: { promise: Promise<void>; resolve: () => void };

  constructor(private readonly ledger: Ledger | undefined) {
    this.rows = new TurnQueue<UsageRecord>((batch) => this.commit(batch));
    this.delivered = new TurnQueue<string>((ids) => this.ledger?.markDelivered(...ids));
  }

  queue(record: UsageRecord): void {
    if (this.ledger) this.rows.push(record);
  }

  /** The request's last message was handed to the hub link: its row is marked delivered after this turn. */
  markDelivered(requestId: string): void {
    if (this.ledger) this.delivered.push(requestId);
  }

  /**
   * Resolves once every record queued so far is committed (by the flush after this turn); undefined
   * when nothing is queued (everything queued before is committed already).
   */
  committed(): Promise<void> | undefined {
    if (this.rows.size === 0) return undefined;
    if (!this.waiting) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.waiting = { promise, resolve };
    }
    return this.waiting.promise;
  }

  /** Commits what is queued, now (shutdown). */
  flush(): void {
    this.rows.flush();
    this.delivered.flush();
  }

  private commit(batch: UsageRecord[]): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    try {
      if (batch.length === 1) this.ledger?.record(batch[0]!);
      else this.ledger?.recordBatch(batch);
    } finally {
      // The ledger never throws on the request path: a row it could not write is held in memory and
      // written on reconnect (ledger.ts), as with a commit made inline.
      waiting?.resolve();
    }
  }
}
