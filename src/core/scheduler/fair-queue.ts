// A waiting line with one lane per request source (hub, local), served round-robin so that
// neither the network nor the owner's own apps can starve the other. FIFO within a lane.
import type { RequestSource } from '../../shared/types';

const OTHER: Record<RequestSource, RequestSource> = { hub: 'local', local: 'hub' };

export class FairQueue<T extends { source: RequestSource; enqueuedAt: number }> {
  private readonly lanes: Record<RequestSource, T[]> = { hub: [], local: [] };
  /** The lane served next when both have items. */
  private turn: RequestSource = 'hub';

  get size(): number {
    return this.lanes.hub.length + this.lanes.local.length;
  }

  /** Adds an item and returns its place in service order, 1 = served next. */
  push(item: T): number {
    const lane = this.lanes[item.source];
    lane.push(item);
    return this.positionAt(item.source, lane.length - 1);
  }

  /** Takes the next item: alternates lanes while both wait; an empty lane yields its turn. */
  shift(): T | undefined {
    const first = this.lanes[this.turn].length > 0 ? this.turn : OTHER[this.turn];
    const item = this.lanes[first].shift();
    if (item) this.turn = OTHER[first];
    return item;
  }

  /** The item shift() would return, without taking it. */
  peek(): T | undefined {
    return this.lanes[this.turn][0] ?? this.lanes[OTHER[this.turn]][0];
  }

  /** Enqueue time of the longest-waiting item (Infinity when empty). */
  oldest(): number {
    const a = this.lanes.hub[0]?.enqueuedAt ?? Infinity;
    const b = this.lanes.local[0]?.enqueuedAt ?? Infinity;
    return Math.min(a, b);
  }

  remove(item: T): boolean {
    const lane = this.lanes[item.source];
    const i = lane.indexOf(item);
    if (i < 0) return false;
    lane.splice(i, 1);
    return true;
  }

  /** Removes and returns every item, oldest first. */
  drain(): T[] {
    const all = [...this.lanes.hub, ...this.lanes.local].sort((a, b) => a.enqueuedAt - b.enqueuedAt);
    this.lanes.hub = [];
    this.lanes.local = [];
    return all;
  }

  /**
   * 1-based service position of the item at `index` in lane `source`: the items before it in its lane,
   * plus the other lane's items served in between by the alternation (capped at that lane's length).
   */
  private positionAt(source: RequestSource, index: number): number {
    const others = this.lanes[OTHER[source]].length;
    const interleaved = Math.min(others, this.turn === source ? index : index + 1);
    return index + interleaved + 1;
  }
}
