// Rate limits for the local gateway (seed 001): a token bucket per key plus a cap on concurrent
// streams per key. Defaults: 60 requests/min, burst 10, 4 concurrent streams.
import { SchedulerConfigError } from './types';

export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number };

/** Refills continuously at ratePerMinute up to `burst` tokens; starts full. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private readonly perMs: number;

  constructor(
    readonly ratePerMinute: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    if (!(ratePerMinute > 0) || !Number.isFinite(ratePerMinute))
      throw new SchedulerConfigError('invalid_limits', `ratePerMinute must be a positive number, got ${ratePerMinute}`, 'ratePerMinute');
    if (!Number.isInteger(burst) || burst < 1)
      throw new SchedulerConfigError('invalid_limits', `burst must be a whole number of at least 1, got ${burst}`, 'burst');
    this.perMs = ratePerMinute / 60_000;
    this.tokens = burst;
    this.updatedAt = now();
  }

  /** Takes one token, or says how long until one is available. */
  take(): TakeResult {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil((1 - this.tokens) / this.perMs)) };
  }

  /** Tokens available now (fractional). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** true when the bucket is back to full: forgetting it loses nothing. */
  isFull(): boolean {
    return this.available() >= this.burst;
  }

  private refill(): void {
    const t = this.now();
    const elapsed = Math.max(0, t - this.updatedAt);
    this.updatedAt = t;
    this.tokens = Math.min(this.burst, this.tokens + elapsed * this.perMs);
  }
}

export interface KeyedLimiterOptions {
  /** Requests per minute per key (default 60). */
  ratePerMinute?: number;
  /** Requests allowed at once after a quiet spell (default 10). */
  burst?: number;
  /** Concurrent streams per key (default 4). */
  maxConcurrent?: number;
  /** Keys remembered at most; idle keys beyond it are forgotten, least recently used first (default 10 000). */
  maxKeys?: number;
  /** Suggested wait when a key is at its concurrency limit (default 1 s). */
  concurrencyRetryMs?: number;
  now?: () => number;
}

export type AcquireResult = { ok: true; release: () => void } | { ok: false; reason: 'rate' | 'concurrency'; retryAfterMs: number };

interface KeyState {
  bucket: TokenBucket;
  active: number;
}

/** A token bucket and a concurrency count per key (API key, connection, client id). */
export class KeyedLimiter {
  private readonly keys = new Map<string, KeyState>();
  private readonly rate: number;
  private readonly burst: number;
  private readonly maxConcurrent: number;
  private readonly maxKeys: number;
  private readonly concurrencyRetryMs: number;
  private readonly now: () => number;

  constructor(opts: KeyedLimiterOptions = {}) {
    this.rate = opts.ratePerMinute ?? 60;
    this.burst = opts.burst ?? 10;
    this.maxConcurrent = opts.maxConcurrent ?? 4;
    this.maxKeys = opts.maxKeys ?? 10_000;
    this.concurrencyRetryMs = opts.concurrencyRetryMs ?? 1_000;
    this.now = opts.now ?? Date.now;
    if (!Number.isInteger(this.maxConcurrent) || this.maxConcurrent < 1)
      throw new SchedulerConfigError('invalid_limits', `maxConcurrent must be a whole number of at least 1, got ${this.maxConcurrent}`, 'maxConcurrent');
    if (!Number.isInteger(this.maxKeys) || this.maxKeys < 1)
      throw new SchedulerConfigError('invalid_limits', `maxKeys must be a whole number of at least 1, got ${this.maxKeys}`, 'maxKeys');
    new TokenBucket(this.rate, this.burst, this.now); // validates rate and burst now rather than on first use
  }

  /** Starts one request for `key`: counts against its rate and holds one of its concurrent slots until release(). */
  acquire(key: string): AcquireResult {
    let state = this.keys.get(key);
    if (state) {
      // Re-insert so the Map's order is least-recently-used first.
      this.keys.delete(key);
      this.keys.set(key, state);
    } else {
      state = { bucket: new TokenBucket(this.rate, this.burst, this.now), active: 0 };
      this.keys.set(key, state);
      this.evict(key);
    }
    if (state.active >= this.maxConcurrent) return { ok: false, reason: 'concurrency', retryAfterMs: this.concurrencyRetryMs };
    const taken = state.bucket.take();
    if (!taken.ok) return { ok: false, reason: 'rate', retryAfterMs: taken.retryAfterMs };
    state.active++;
    const held = state;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        held.active--;
      },
    };
  }

  /** Streams running now for `key`. */
  active(key: string): number {
    return this.keys.get(key)?.active ?? 0;
  }

  /** Tokens `key` has now (fractional); a key not seen yet has a full bucket. */
  available(key: string): number {
    return this.keys.get(key)?.bucket.available() ?? this.burst;
  }

  /** Keys remembered now. */
  get size(): number {
    return this.keys.size;
  }

  /** Forgets idle keys whose bucket is full again: nothing is lost by dropping them. */
  sweep(keep?: string): void {
    for (const [key, s] of this.keys) if (key !== keep && s.active === 0 && s.bucket.isFull()) this.keys.delete(key);
  }

  private evict(keep: string): void {
    if (this.keys.size <= this.maxKeys) return;
    this.sweep(keep);
    // Still over: drop the least recently used idle keys (their rate history is lost, never a running stream).
    for (const [key, s] of this.keys) {
      if (this.keys.size <= this.maxKeys) break;
      if (s.active === 0 && key !== keep) this.keys.delete(key);
    }
  }
}
