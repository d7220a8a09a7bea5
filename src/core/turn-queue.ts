// Items gathered during one turn of the event loop, handed over together right after it (setImmediate),
// or at once on flush(). The per-turn batches (ledger rows, request log lines) share it.
// With minGapMs, hand-overs are also spaced at least that far apart: the first after a quiet spell still
// goes right after its turn, and items pushed sooner after a hand-over wait for the gap to pass, so a
// burst (streams ending one after another over a few ms) makes a few batches instead of one per turn.
import { performance } from 'node:perf_hooks';

export class TurnQueue<T> {
  private items: T[] = [];
  private lastDrain = Number.NEGATIVE_INFINITY;
  /** Counts hand-overs: a scheduled one that finds it changed (flush() came first) does nothing. */
  private drains = 0;

  constructor(
    private readonly drain: (items: T[]) => void,
    private readonly minGapMs = 0,
  ) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    if (this.items.length !== 1) return;
    const wait = this.lastDrain + this.minGapMs - performance.now();
    const at = this.drains;
    const due = (): void => {
      if (this.drains !== at) return;
      // Timers count from the loop's cached clock, so one can fire a little early: wait out the rest.
      const left = this.lastDrain + this.minGapMs - performance.now();
      if (left > 0) setTimeout(due, left);
      else this.flush();
    };
    if (wait > 0) setTimeout(due, wait);
    else setImmediate(due);
  }

  /** Hands over what is queued, now (no-op when empty). */
  flush(): void {
    if (this.items.length === 0) return;
    const items = this.items;
    this.items = [];
    this.drains++;
    this.lastDrain = performance.now();
    this.drain(items);
  }
}
