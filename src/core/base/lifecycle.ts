// One store of what runs: each part or feature registers its start and stop as it is built, so the order
// things are built in is the order they start in, and they stop in reverse (what was built on another stops
// before it). A stop that throws is logged and the rest still stop: a half-stopped agent that keeps the
// ledger open or a port bound is worse than one failure named in the log. start() and stop() are
// idempotent, and a stop() during start() lets the step under way finish, starts nothing more, and stops
// what did start.

/** What the lifecycle says when a stop fails (a Logger fits). */
export interface LifecycleLog {
  error(message: string): void;
}

export interface LifecycleEntry {
  /** Names the entry in the log line of a failing stop. */
  name: string;
  start?: () => unknown;
  stop?: () => unknown;
}

export class Lifecycle {
  private readonly entries: LifecycleEntry[] = [];
  /** The entries whose start ran (or is running), in start order. */
  private started: LifecycleEntry[] = [];
  private starting?: Promise<void>;
  private stopping?: Promise<void>;
  /** The start step under way: stop() waits for it before stopping anything. */
  private step?: Promise<unknown>;
  private running = false;

  constructor(private readonly log: LifecycleLog) {}

  /** Registers an entry: it starts after those registered before it and stops before them. */
  add(entry: LifecycleEntry): void {
    this.entries.push(entry);
  }

  /** Registers a stop only (a file to close, a buffer to flush): it runs where it stands in the reverse order. */
  onStop(name: string, stop: () => unknown): void {
    this.add({ name, stop });
  }

  /** Whether start() ran and stop() has not. */
  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Starts every entry in order, each awaited. A start that throws stops what started before it and
   * itself (it may hold half of what it opened), in reverse, and rejects with its error. A second call
   * while running returns the first call's promise.
   */
  start(): Promise<void> {
    if (this.running) return this.starting ?? Promise.resolve();
    this.running = true;
    this.starting = this.run();
    return this.starting;
  }

  /** Stops what started, in reverse, each awaited; every stop runs even when one fails. Idempotent. */
  stop(): Promise<void> {
    if (!this.running) return this.stopping ?? Promise.resolve();
    this.running = false;
    this.stopping = this.halt();
    return this.stopping;
  }

  private async run(): Promise<void> {
    // Started again while a stop is under way: that stop finishes first.
    await this.stopping;
    this.stopping = undefined;
    for (const entry of this.entries) {
      if (!this.running) return;
      this.started.push(entry);
      try {
        this.step = Promise.resolve(entry.start?.());
        await this.step;
      } catch (e) {
        this.step = undefined;
        if (this.running) await this.stop();
        throw e;
      }
      this.step = undefined;
    }
  }

  private async halt(): Promise<void> {
    await this.step?.catch(() => undefined);
    const started = this.started;
    this.started = [];
    for (const entry of started.reverse()) {
      try {
        await entry.stop?.();
      } catch (e) {
        this.log.error(`${entry.name} did not stop cleanly: ${(e as Error).message}. The rest are stopped.`);
      }
    }
  }
}
