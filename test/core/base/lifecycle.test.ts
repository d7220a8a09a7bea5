// Lifecycle: entries start in the order they were added and stop in reverse; a failing stop is logged and
// the rest still stop; start and stop are idempotent; a stop during start stops only what started.
import { describe, expect, it } from 'vitest';
import { Lifecycle } from '../../../src/core/base/lifecycle';

function recorder() {
  const calls: string[] = [];
  const errors: string[] = [];
  const life = new Lifecycle({ error: (m) => errors.push(m) });
  const add = (name: string, o: { startFails?: boolean; stopFails?: boolean; startAwait?: Promise<void> } = {}) =>
    life.add({
      name,
      start: async () => {
        calls.push(`start ${name}`);
        await o.startAwait;
        if (o.startFails) throw new Error(`${name} cannot start`);
      },
      stop: async () => {
        await Promise.resolve();
        calls.push(`stop ${name}`);
        if (o.stopFails) throw new Error(`${name} stuck`);
      },
    });
  return { life, calls, errors, add };
}

describe('Lifecycle', () => {
  it('starts in the order added, each awaited, and stops in reverse', async () => {
    const { life, calls, add } = recorder();
    add('a');
    add('b');
    life.onStop('c', () => calls.push('stop c'));
    await life.start();
    expect(life.isRunning).toBe(true);
    expect(calls).toEqual(['start a', 'start b']);
    await life.stop();
    expect(life.isRunning).toBe(false);
    expect(calls).toEqual(['start a', 'start b', 'stop c', 'stop b', 'stop a']);
  });

  it('logs a stop that fails, names it, and still stops the rest', async () => {
    const { life, calls, errors, add } = recorder();
    add('ledger');
    add('link', { stopFails: true });
    add('gateway');
    await life.start();
    await expect(life.stop()).resolves.toBeUndefined();
    expect(calls.filter((c) => c.startsWith('stop'))).toEqual(['stop gateway', 'stop link', 'stop ledger']);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('link');
    expect(errors[0]).toContain('link stuck');
  });

  it('stop is idempotent: a second call, at once or later, stops nothing again', async () => {
    const { life, calls, add } = recorder();
    add('a');
    await life.start();
    const first = life.stop();
    const second = life.stop();
    await Promise.all([first, second]);
    await life.stop();
    expect(calls).toEqual(['start a', 'stop a']);
  });

  it('stop before start does nothing; start is idempotent while running', async () => {
    const { life, calls, add } = recorder();
    add('a');
    await life.stop();
    expect(calls).toEqual([]);
    await Promise.all([life.start(), life.start()]);
    await life.start();
    expect(calls).toEqual(['start a']);
  });

  it('a start that fails stops what started (itself included) in reverse and rejects with its error', async () => {
    const { life, calls, add } = recorder();
    add('a');
    add('b', { startFails: true });
    add('c');
    await expect(life.start()).rejects.toThrow('b cannot start');
    expect(calls).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    expect(life.isRunning).toBe(false);
  });

  it('a stop during start lets the step under way finish, starts nothing more, and stops what started', async () => {
    const { life, calls, add } = recorder();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    add('a');
    add('b', { startAwait: gate });
    add('c');
    const starting = life.start();
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual(['start a', 'start b']);
    const stopping = life.stop();
    release();
    await Promise.all([starting, stopping]);
    expect(calls).toEqual(['start a', 'start b', 'stop b', 'stop a']);
  });

  it('starts again after a stop, every entry once more', async () => {
    const { life, calls, add } = recorder();
    add('a');
    await life.start();
    await life.stop();
    await life.start();
    await life.stop();
    expect(calls).toEqual(['start a', 'stop a', 'start a', 'stop a']);
  });
});
