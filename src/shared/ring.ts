// The one fixed-capacity ring (core and renderer): the newest `capacity` items, oldest first; O(1) push,
// no array shifting. Live series, GPU history, log lines, alerts, notices and the ledger's held records
// (a FIFO: peek, then drop what was written) never grow without bound.
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Adds an item; returns true when the oldest item had to be dropped to make room. */
  push(item: T): boolean {
    const at = (this.start + this.count) % this.capacity;
    this.items[at] = item;
    if (this.count < this.capacity) {
      this.count++;
      return false;
    }
    this.start = (this.start + 1) % this.capacity;
    return true;
  }

  /** The `max` oldest items (all by default), oldest first, without removing them. */
  peek(max = this.count): T[] {
    const n = Math.min(max, this.count);
    const out: T[] = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = this.items[(this.start + i) % this.capacity] as T;
    return out;
  }

  /** Removes the `n` oldest items. */
  drop(n: number): void {
    const k = Math.min(n, this.count);
    for (let i = 0; i < k; i++) this.items[(this.start + i) % this.capacity] = undefined;
    this.start = (this.start + k) % this.capacity;
    this.count -= k;
  }

  /** Oldest first. */
  toArray(): T[] {
    return this.peek();
  }

  last(): T | undefined {
    return this.count === 0 ? undefined : this.items[(this.start + this.count - 1) % this.capacity];
  }

  /** Items for which `keep` is true, oldest first, scanning back from the newest while `keep` holds. */
  tailWhile(keep: (item: T) => boolean): T[] {
    const out: T[] = [];
    for (let i = this.count - 1; i >= 0; i--) {
      const item = this.items[(this.start + i) % this.capacity] as T;
      if (!keep(item)) break;
      out.push(item);
    }
    return out.reverse();
  }

  clear(): void {
    this.start = 0;
    this.count = 0;
    this.items.fill(undefined);
  }
}
