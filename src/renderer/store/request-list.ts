// The live request list: updates are applied in place by id, new requests are appended, and the list
// keeps at most `max` requests (the oldest go first).
import type { RequestView } from '../../shared/types';

export const MAX_REQUESTS = 10_000;

export class RequestList {
  private items: RequestView[] = [];
  private readonly pos = new Map<string, number>();
  private offset = 0; // items dropped from the front since positions were last rebuilt

  constructor(private readonly max = MAX_REQUESTS) {}

  /** Applies updates; returns a new array (for React) when anything changed, else the same one. */
  apply(updates: RequestView[]): RequestView[] {
    if (updates.length === 0) return this.items;
    const next = this.items.slice();
    for (const r of updates) {
      const at = this.pos.get(r.id);
      if (at !== undefined && at - this.offset >= 0) {
        next[at - this.offset] = r;
      } else {
        this.pos.set(r.id, next.length + this.offset);
        next.push(r);
      }
    }
    if (next.length > this.max) {
      const drop = next.length - this.max;
      for (let i = 0; i < drop; i++) this.pos.delete(next[i]!.id);
      next.splice(0, drop);
      this.offset += drop;
      if (this.offset > this.max * 4) this.reindex(next);
    }
    this.items = next;
    return next;
  }

  /** Replaces the whole list (after a reconnect), keeping the newest `max`, oldest first by start time. */
  reset(list: RequestView[]): RequestView[] {
    const sorted = list.slice().sort((a, b) => a.startedAt - b.startedAt);
    const next = sorted.slice(Math.max(0, sorted.length - this.max));
    this.reindex(next);
    this.items = next;
    return next;
  }

  get(id: string): RequestView | undefined {
    const at = this.pos.get(id);
    return at === undefined ? undefined : this.items[at - this.offset];
  }

  get size(): number {
    return this.items.length;
  }

  private reindex(list: RequestView[]): void {
    this.pos.clear();
    this.offset = 0;
    list.forEach((r, i) => this.pos.set(r.id, i));
  }
}
