// A fixed-size ring: the newest `capacity` items, oldest first. O(1) push, no array shifting.
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('ring capacity must be a positive integer');
    this.items = new Array<T | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    const end = (this.start + this.size) % this.capacity;
    this.items[end] = item;
    if (this.size < this.capacity) this.size += 1;
    else this.start = (this.start + 1) % this.capacity;
  }

  last(): T | undefined {
    return this.size ? this.items[(this.start + this.size - 1) % this.capacity] : undefined;
  }

  toArray(): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.size; i++) out.push(this.items[(this.start + i) % this.capacity] as T);
    return out;
  }
}
