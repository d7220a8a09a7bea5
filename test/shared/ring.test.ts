// Ring: the one fixed-capacity ring. As a window it keeps the newest items; as the ledger's FIFO of held
// records it reports a drop when full, and peek/drop take the oldest without losing the rest.
import { describe, expect, it } from 'vitest';
import { Ring } from '../../src/shared/ring';

describe('Ring', () => {
  it('keeps the newest items, oldest first, and says when pushing dropped the oldest', () => {
    const r = new Ring<number>(3);
    expect([r.push(1), r.push(2), r.push(3)]).toEqual([false, false, false]);
    expect(r.push(4)).toBe(true);
    expect(r.toArray()).toEqual([2, 3, 4]);
    expect(r.size).toBe(3);
    expect(r.last()).toBe(4);
  });

  it('peeks and drops the oldest across the wrap-around point', () => {
    const r = new Ring<number>(4);
    for (let i = 1; i <= 6; i++) r.push(i); // holds 3 4 5 6, start in the middle of the array
    expect(r.peek(2)).toEqual([3, 4]);
    expect(r.size).toBe(4);
    r.drop(3);
    expect(r.toArray()).toEqual([6]);
    r.push(7);
    r.push(8);
    expect(r.peek()).toEqual([6, 7, 8]);
    r.drop(10);
    expect(r.size).toBe(0);
    expect(r.peek()).toEqual([]);
    expect(r.last()).toBeUndefined();
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new Ring(0)).toThrow(RangeError);
    expect(() => new Ring(1.5)).toThrow(RangeError);
  });
});
