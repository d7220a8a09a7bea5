// Items gathered during one turn of the event loop, handed over together right after it (setImmediate),
// or at once on flush(). The per-turn batches (ledger rows and delivered marks, request log lines) share it.
export class TurnQueue<T> {
  private items: T[] = [];
  /** Counts hand-overs: a scheduled one that finds it changed (flush() came first) does nothing. */
  private drains = 0;

  constructor(private readonly drain: (items: T[]) => void) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length !== 1) return;
    const at = this.drains;
    setImmediate(() => {
      if (this.drains === at) this.flush();
    });
  }

  /** Hands over what is queued, now (no-op when empty). */
  flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.drains++;
    this.drain(items);
  }
}
