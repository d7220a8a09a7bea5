import { describe, expect, it } from 'vitest';
import { KeyedLimiter, TokenBucket } from '../../../src/core/scheduler/token-bucket';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('TokenBucket', () => {
  it('allows the burst, then refills at the rate', () => {
    const c = clock();
    const b = new TokenBucket(60, 10, c.now);
    for (let i = 0; i < 10; i++) expect(b.take()).toEqual({ ok: true });
    const denied = b.take();
    expect(denied).toEqual({ ok: false, retryAfterMs: 1000 });

    c.advance(500);
    expect(b.take()).toEqual({ ok: false, retryAfterMs: 500 });
    c.advance(500);
    expect(b.take()).toEqual({ ok: true });
    expect(b.take().ok).toBe(false);

    // A long pause refills to the burst, never above it.
    c.advance(60 * 60_000);
    expect(b.available()).toBe(10);
    for (let i = 0; i < 10; i++) expect(b.take().ok).toBe(true);
    expect(b.take().ok).toBe(false);
  });

  it('rejects nonsense settings', () => {
    expect(() => new TokenBucket(0, 10)).toThrow(expect.objectContaining({ code: 'invalid_limits', field: 'ratePerMinute' }));
    expect(() => new TokenBucket(60, 0)).toThrow(expect.objectContaining({ code: 'invalid_limits', field: 'burst' }));
  });
});

describe('KeyedLimiter', () => {
  it('uses seed 001 defaults: burst 10, 60/min, 4 concurrent per key, keys independent', () => {
    const c = clock();
    const lim = new KeyedLimiter({ now: c.now });
    const held = [];
    for (let i = 0; i < 4; i++) {
      const r = lim.acquire('alice');
      expect(r.ok).toBe(true);
      if (r.ok) held.push(r.release);
    }
    const busy = lim.acquire('alice');
    expect(busy).toMatchObject({ ok: false, reason: 'concurrency' });
    expect(lim.acquire('bob').ok).toBe(true);

    // Finish them one by one: 10 starts in total pass, the 11th hits the rate.
    let started = 4;
    while (started < 10) {
      held.shift()!();
      const r = lim.acquire('alice');
      expect(r.ok).toBe(true);
      if (r.ok) held.push(r.release);
      started++;
    }
    held.shift()!();
    expect(lim.acquire('alice')).toEqual({ ok: false, reason: 'rate', retryAfterMs: 1000 });
    c.advance(1000);
    expect(lim.acquire('alice').ok).toBe(true);
  });

  it('release is idempotent', () => {
    const lim = new KeyedLimiter({ maxConcurrent: 1 });
    const r = lim.acquire('k');
    if (!r.ok) throw new Error('expected ok');
    r.release();
    r.release();
    expect(lim.active('k')).toBe(0);
    const again = lim.acquire('k');
    expect(again.ok).toBe(true);
    expect(lim.acquire('k')).toMatchObject({ ok: false, reason: 'concurrency' });
  });

  it('keeps memory bounded: idle keys are forgotten, running ones never', () => {
    const c = clock();
    const lim = new KeyedLimiter({ maxKeys: 100, now: c.now });
    const running = lim.acquire('streaming');
    expect(running.ok).toBe(true);
    for (let i = 0; i < 1000; i++) {
      const r = lim.acquire(`k${i}`);
      if (r.ok) r.release();
    }
    expect(lim.size).toBeLessThanOrEqual(100);
    expect(lim.active('streaming')).toBe(1);

    // Once buckets are full again, sweep() drops every idle key.
    c.advance(60_000);
    lim.sweep();
    expect(lim.size).toBe(1);
  });
});
