// Items gathered during one turn of the event loop, handed over together right after it (setImmediate),
// or at once on flush(). The per-turn batches (ledger rows and their delivered marks, request log lines) share it.
export class TurnQueue<T> {
  private items: T[] = [];

  constructor(private readonly drain: (items: T[]) => void) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length === 1) setImmediate(() => this.flush());
  }

  /** Hands over what is queued, now (no-op when empty). */
  flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.drain(items);
  }
}
