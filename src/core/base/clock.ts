// Time, two ways. Every duration and rate comes from the monotonic clock (performance.now(): it never steps);
// the wall clock (Date.now()) only gives the timestamps the owner reads. NTP steps, a suspend and resume, or a
// manual change move the wall clock by minutes or hours in one go: a duration taken as a difference of two
// Date.now() readings would then be negative or an hour long (a ledger row refused, a heartbeat's rates off
// by 25 times). WallClockWatch notices such a step and says so once.
import type { Logger } from './log';

/** Milliseconds on the monotonic clock (from an arbitrary origin): for durations only. */
export function monoMs(): number {
  return performance.now();
}

/** Whole milliseconds since a monoMs() reading: never negative, whatever the wall clock did. */
export function elapsedMs(sinceMono: number, nowMono = performance.now()): number {
  return Math.max(0, Math.round(nowMono - sinceMono));
}

/** The wall clock moved against the monotonic one by more than this: a step, not drift. */
export const WALL_STEP_MS = 2000;

/** Stable code of the log line a wall-clock step gets. */
export const WALL_CLOCK_STEP = 'wall_clock_step';

/**
 * Watches the wall clock against the monotonic one and logs each step once (warn, code wall_clock_step):
 * what moved and that no figure changes. Durations never read the wall clock, so this only explains the
 * timestamps around it.
 */
export class WallClockWatch {
  private offset = Date.now() - performance.now();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly log: Logger,
    private readonly everyMs = 1000,
  ) {}

  start(): void {
    this.offset = Date.now() - performance.now();
    this.timer ??= setInterval(() => this.check(), this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One look: the step since the last look, in ms (0 when under WALL_STEP_MS), logged when there was one. */
  check(): number {
    const offset = Date.now() - performance.now();
    const step = offset - this.offset;
    this.offset = offset;
    if (Math.abs(step) < WALL_STEP_MS) return 0;
    const s = Math.round(step / 1000);
    this.log.warn(
      `the wall clock stepped ${s > 0 ? 'forward' : 'back'} by ${Math.abs(s)} s (a time sync, a suspend and resume, or a manual change); request durations, rates and ledger rows are measured on a clock that does not step, so none of them changed`,
      { code: WALL_CLOCK_STEP, stepMs: Math.round(step) },
    );
    return step;
  }
}
