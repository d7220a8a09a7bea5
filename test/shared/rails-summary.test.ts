import { describe, expect, it } from 'vitest';
import { fmtRailDuration, railLine } from '../../src/shared/rails-summary';
import type { RailSpanSummary } from '../../src/shared/views/usage';

const MIN = 60_000;
const summary = (p: Record<string, number>, t: Record<string, number> = {}): RailSpanSummary => ({
  from: 0,
  to: 1,
  pausedMs: Object.values(p).reduce((a, b) => a + b, 0),
  pausedByCause: p,
  throttledMs: Object.values(t).reduce((a, b) => a + b, 0),
  throttledByCause: t,
  openPause: [],
  openThrottle: [],
});

describe('railLine', () => {
  it('names each cause with time, longest first, and only those', () => {
    const l = railLine(summary({ gpu_hot: 2 * MIN, gpu_busy: 10 * MIN, schedule: 0 }), 'today');
    expect(l.code).toBe('rails_paused');
    expect(l.paused.map((p) => [p.code, p.ms])).toEqual([
      ['gpu_busy', 10 * MIN],
      ['gpu_hot', 2 * MIN],
    ]);
    expect(l.text).toBe('Paused 12 min today: GPU busy with another program 10 min, too hot 2 min.');
  });

  it('throttled only, and nothing at all, have their own codes', () => {
    expect(railLine(summary({}, { gpu_hot: 3 * MIN }), 'today')).toMatchObject({ code: 'rails_throttled', throttled: [{ code: 'gpu_hot', ms: 3 * MIN }] });
    expect(railLine(summary({}), 'today')).toMatchObject({ code: 'rails_clear', text: 'Not paused today.', paused: [] });
  });

  it('durations', () => {
    expect([fmtRailDuration(45_000), fmtRailDuration(12 * MIN), fmtRailDuration(60 * MIN), fmtRailDuration(185 * MIN)]).toEqual([
      '45 s',
      '12 min',
      '1 h',
      '3 h 5 min',
    ]);
  });
});
