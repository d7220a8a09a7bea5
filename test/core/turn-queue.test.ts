// TurnQueue: what is pushed in one turn is handed over together right after it; flush() hands it over now;
// with a gap, hand-overs are at least that far apart.
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../src/core/turn-queue';

const GAP = 40;

/** A queue with a GAP ms gap that records each hand-over and when it came; nextDrain() settles on the next. */
function gapQueue(): { q: TurnQueue<number>; drained: Array<{ items: number[]; at: number }>; nextDrain: () => Promise<void> } {
  const drained: Array<{ items: number[]; at: number }> = [];
  let next: (() => void) | undefined;
  const q = new TurnQueue<number>((items) => {
    drained.push({ items, at: performance.now() });
    next?.();
  }, GAP);
  return { q, drained, nextDrain: () => new Promise<void>((r) => (next = r)) };
}

describe('TurnQueue', () => {
  it('hands over the items of one turn together, after that turn, in order', async () => {
    const drained: number[][] = [];
    const q = new TurnQueue<number>((items) => drained.push(items));
    q.push(1);
    q.push(2);
    expect(drained).toEqual([]);
    expect(q.size).toBe(2);
    await nextTurn();
    expect(drained).toEqual([[1, 2]]);
    q.push(3);
    await nextTurn();
    expect(drained).toEqual([[1, 2], [3]]);
  });

  it('flush() hands over at once, and the turn after has nothing left to hand over', async () => {
    const drained: number[][] = [];
    const q = new TurnQueue<number>((items) => drained.push(items));
    q.push(1);
    q.flush();
    expect(drained).toEqual([[1]]);
    expect(q.size).toBe(0);
    await nextTurn();
    expect(drained).toEqual([[1]]);
  });

  it('with a gap: the first hand-over goes after its turn, one pushed sooner waits until the gap has passed', async () => {
    const { q, drained, nextDrain } = gapQueue();
    q.push(1);
    await nextTurn();
    expect(drained.map((d) => d.items)).toEqual([[1]]); // after a quiet spell: right after its turn
    const second = nextDrain();
    q.push(2);
    await nextTurn();
    q.push(3);
    expect(drained).toHaveLength(1); // within the gap: not after this turn
    await second;
    expect(drained.map((d) => d.items)).toEqual([[1], [2, 3]]);
    expect(drained[1]!.at - drained[0]!.at).toBeGreaterThanOrEqual(GAP - 1);
  });

  it('with a gap: a hand-over scheduled before a flush() does not hand over what is pushed after it early', async () => {
    const { q, drained, nextDrain } = gapQueue();
    q.push(1);
    await nextTurn(); // [1] handed over; 2 pushed now waits for the gap
    q.push(2);
    await new Promise((r) => setTimeout(r, GAP - 10)); // time passing is what is tested
    q.flush(); // [2] now: the hand-over scheduled for it must not take 3 only 10 ms later
    const third = nextDrain();
    q.push(3);
    await third;
    expect(drained.map((d) => d.items)).toEqual([[1], [2], [3]]);
    expect(drained[2]!.at - drained[1]!.at).toBeGreaterThanOrEqual(GAP - 1);
  });
});
