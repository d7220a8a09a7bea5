// TurnPacer: the first caller of a turn goes at once; the others wait, released one per later turn in
// arrival order, with whatever else the loop has queued (I/O, other setImmediate work) running in between;
// close() tells the ones still waiting not to go.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TurnPacer } from '../../../src/core/scheduler/turn-pacer';

describe('TurnPacer', () => {
  it('lets the first caller of a turn through and releases the rest one per turn, in order', async () => {
    const pacer = new TurnPacer();
    const log: string[] = [];
    expect(pacer.take()).toBeUndefined();
    const waits = [1, 2, 3].map((n) => pacer.take()!.then(() => log.push(`start ${n}`)));
    expect(pacer.queued).toBe(3);
    // Work queued for the loop after the burst: it runs between the releases, not after all of them.
    setImmediate(() => log.push('other work'));
    await Promise.all(waits);
    expect(log).toEqual(['start 1', 'other work', 'start 2', 'start 3']);
    expect(pacer.queued).toBe(0);
  });

  it('once the queue is empty, the next turn lets its first caller through again', async () => {
    const pacer = new TurnPacer();
    expect(pacer.take()).toBeUndefined();
    const second = pacer.take();
    expect(second).toBeInstanceOf(Promise);
    await second;
    await nextTurn();
    await nextTurn();
    expect(pacer.take()).toBeUndefined();
    expect(pacer.take()).toBeInstanceOf(Promise);
  });

  it('close() tells every waiting caller not to go, at once, and later callers too', async () => {
    const pacer = new TurnPacer();
    expect(pacer.take()).toBeUndefined();
    const waits = [pacer.take()!, pacer.take()!];
    pacer.close();
    expect(pacer.queued).toBe(0);
    expect(await Promise.all(waits)).toEqual([false, false]);
    expect(await pacer.take()).toBe(false);
  });

  it('a released caller is told to go (true)', async () => {
    const pacer = new TurnPacer();
    pacer.take();
    expect(await pacer.take()).toBe(true);
  });
});
