// TurnQueue: what is pushed in one turn is handed over together right after it; flush() hands it over now.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../../src/core/base/turn-queue';

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

  it('a hand-over scheduled before a flush() leaves what is pushed after it for the turn after', async () => {
    const drained: number[][] = [];
    const q = new TurnQueue<number>((items) => drained.push(items));
    q.push(1);
    q.flush();
    q.push(2);
    expect(drained).toEqual([[1]]);
    await nextTurn();
    expect(drained).toEqual([[1], [2]]);
  });
});
