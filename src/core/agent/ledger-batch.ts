// Ledger commit batching. Requests that finish in the same turn of the event loop (a burst of streams
// ending together) are written in one transaction right after it (setImmediate), instead of one commit
// each while other streams wait; and commits are at least COMMIT_GAP_MS apart, so streams ending one
// after another over a few ms (as a batch of streams started together does) share a few commits instead
// of taking one each (on an idle machine one row's commit takes ~60-100 µs, eight rows' ~150 µs; under a
// 64-stream load several times that): those are the milliseconds the last chunks of the other streams
// wait behind (docs/benchmarks.md, seventh pass).
// A request whose end comes within the gap of the last commit waits for the rest of the gap (a timer of at
// most 2 ms; later when the loop is busy) before its final message goes out. Commit before send: the relay's beforeFinal awaits committed() before
// a stream_end or result goes out, so a request's row is committed before its final message can leave
// the process (test/integration/ledger/agent-crash.test.ts).
import type { UsageRecord } from '../../shared/types';
import type { Ledger } from '../ledger/ledger';
import { TurnQueue } from '../turn-queue';

/** Least time between two commits of finished requests' rows. */
export const COMMIT_GAP_MS = 2;

export class LedgerBatch {
  private readonly pending: TurnQueue<UsageRecord>;
  /** Settled by the flush that commits the current batch (made only when someone waits for it). */
  private waiting?: { promise: Promise<void>; resolve: () => void };

  constructor(
    private readonly ledger: Ledger | undefined,
    gapMs = COMMIT_GAP_MS,
  ) {
    this.pending = new TurnQueue<UsageRecord>((batch) => this.commit(batch), gapMs);
  }

  queue(record: UsageRecord): void {
    if (this.ledger) this.pending.push(record);
  }

  /**
   * Resolves once every record queued so far is committed (by the flush after this turn); undefined
   * when nothing is queued (everything queued before is committed already).
   */
  committed(): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined;
    if (!this.waiting) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.waiting = { promise, resolve };
    }
    return this.waiting.promise;
  }

  /** Commits what is queued, now. */
  flush(): void {
    this.pending.flush();
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
