// One start per turn of the event loop (the scheduler's admissions). A burst that arrives in one socket
// read (the hub's 64 requests in one TCP segment: `ws` emits every message of a read in the same tick)
// would otherwise start every request before the loop reads any engine response, so running streams'
// chunks wait behind all the starts (docs/decisions/0003-pacing.md). take() lets the first caller of a turn through at once and
// queues the rest, released one per later turn (setImmediate) in arrival order, with I/O in between.
export class TurnPacer {
  private readonly waiting: Array<(go: boolean) => void> = [];
  /** A caller went through in the current turn (cleared by the next setImmediate). */
  private busy = false;
  private closed = false;

  get queued(): number {
    return this.waiting.length;
  }

  /** undefined: go now; else a promise of the caller's turn: true to go, false when close() came first. */
  take(): Promise<boolean> | undefined {
    if (this.closed) return Promise.resolve(false);
    if (!this.busy) {
      this.busy = true;
      setImmediate(this.release);
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Everyone still waiting is told not to go (false), now; later take()s too. */
  close(): void {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w(false);
  }

  private readonly release = (): void => {
    const next = this.waiting.shift();
    if (!next) {
      this.busy = false;
      return;
    }
    next(true);
    setImmediate(this.release);
  };
}
