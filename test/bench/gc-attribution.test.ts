// The bench's GC attribution: which chunks' spans a pause overlapped, and the split's percentiles.
import { describe, expect, it } from 'vitest';
import { emptySplit, splitByPauses, summarizeSplit } from '../../bench/gc-attribution';
import type { StreamTrace } from '../../bench/trace';

function trace(spans: Array<[number, number]>): StreamTrace {
  return { sentAt: 0, chunks: spans.length, writtenAt: spans.map((s) => s[0]), latencies: spans.map((s) => s[1]) };
}

describe('splitByPauses', () => {
  it('counts a chunk as hit only when a pause overlaps its span', () => {
    const split = emptySplit();
    // Spans: [100,101] [110,112] [120,121] [130,140]; pauses [111,111.5] (inside the 2nd) and a long one from 125 to 135 (reaches the 4th).
    splitByPauses(
      [
        trace([
          [100, 1],
          [110, 2],
          [120, 1],
          [130, 10],
        ]),
      ],
      [
        [125, 10],
        [111, 0.5],
      ],
      split,
    );
    expect(split.hit.sort((a, b) => a - b)).toEqual([2, 10]);
    expect(split.clear.sort()).toEqual([1, 1]);
    expect(split.pauses).toBe(2);
    expect(split.pauseMs).toBe(10.5);
  });

  it('does not count a pause that ended before a span or began after it', () => {
    const split = emptySplit();
    splitByPauses(
      [trace([[100, 5]])],
      [
        [90, 10],
        [105, 1],
      ],
      split,
    );
    expect(split.hit).toEqual([]);
    expect(split.clear).toEqual([5]);
  });

  it('says which share of the tail waited through a pause', () => {
    const split = emptySplit();
    // 99 quick chunks clear of GC and one slow one that a pause held.
    const spans: Array<[number, number]> = Array.from({ length: 99 }, (_, i) => [i * 10, 1] as [number, number]);
    spans.push([2000, 8]);
    splitByPauses([trace(spans)], [[2002, 4]], split);
    const g = summarizeSplit(split);
    expect(g.chunks).toBe(100);
    expect(g.hitShare).toBe(0.01);
    expect(g.clear.max).toBe(1);
    expect(g.all.max).toBe(8);
    expect(g.tailHitShare).toBe(1); // the slowest 1 %: the one chunk a pause held
  });
});
