// Durations on the monotonic clock, and a step of the wall clock said once (base/clock.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { elapsedMs, WALL_CLOCK_STEP, WallClockWatch } from '../../../src/core/base/clock';
import type { Logger } from '../../../src/core/base/log';

afterEach(() => {
  vi.useRealTimers();
});

function recordingLog(): { log: Logger; warned: Array<Record<string, unknown> | undefined> } {
  const warned: Array<Record<string, unknown> | undefined> = [];
  const log = { warn: (_msg: string, fields?: Record<string, unknown>) => void warned.push(fields) } as unknown as Logger;
  return { log, warned };
}

describe('clock', () => {
  it('elapsedMs is whole and never negative', () => {
    expect(elapsedMs(100, 350.6)).toBe(251);
    expect(elapsedMs(500, 400)).toBe(0);
  });

  it('WallClockWatch logs each step of the wall clock once, with its code and size, and not drift', () => {
    vi.useFakeTimers({ toFake: ['Date', 'performance', 'setInterval', 'clearInterval'] });
    vi.setSystemTime(1_000_000_000);
    const { log, warned } = recordingLog();
    const watch = new WallClockWatch(log, 1000);
    watch.start();
    vi.advanceTimersByTime(5000);
    expect(warned).toEqual([]);
    vi.setSystemTime(Date.now() - 3_600_000); // an hour back
    vi.advanceTimersByTime(1000);
    vi.advanceTimersByTime(5000); // later looks see no new step
    vi.setSystemTime(Date.now() + 1500); // 1.5 s: drift-sized, not a step
    vi.advanceTimersByTime(1000);
    vi.setSystemTime(Date.now() + 7_200_000); // two hours forward
    vi.advanceTimersByTime(1000);
    watch.stop();
    expect(warned).toEqual([
      { code: WALL_CLOCK_STEP, stepMs: -3_600_000 },
      { code: WALL_CLOCK_STEP, stepMs: 7_200_000 },
    ]);
  });
});
