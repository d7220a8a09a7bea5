// A first-in first-out queue with a fixed capacity: when full, pushing drops the oldest item.
// Holds usage records while the database cannot take them.

export class BoundedQueue<T> {
  private items: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`queue capacity must be a positive integer, got ${capacity}`);
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.count;
  }

  /** Adds an item; returns true when the oldest item had to be dropped to make room. */
  push(item: T): boolean {
    const tail = (this.head + this.count) % this.capacity;
    this.items[tail] = item;
    if (this.count < this.capacity) {
      this.count++;
      return false;
    }
    this.head = (this.head + 1) % this.capacity;
    return true;
  }

  /** The items, oldest first, without removing them. */
  peek(max = this.count): T[] {
    const n = Math.min(max, this.count);
    const out: T[] = new Array<T>(n);
    for (let i = 0; i < n; i++) out[i] = this.items[(this.head + i) % this.capacity] as T;
    return out;
  }

  /** Removes the `n` oldest items. */
  drop(n: number): void {
    const k = Math.min(n, this.count);
    for (let i = 0; i < k; i++) this.items[(this.head + i) % this.capacity] = undefined;
    this.head = (this.head + k) % this.capacity;
    this.count -= k;
  }
}
