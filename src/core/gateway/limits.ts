// Per-key limits of the gateway (seed 001): a token bucket (requests/min with a burst) and a cap on
// concurrent streams. Also reports the quota ({remaining, reset}) clients see. Keys are the gateway's
// own API key names, a handful; the limiter's LRU cap (10 000 keys) is never reached.
import { KeyedLimiter } from '../scheduler/token-bucket';

export interface Quota {
  /** Whole requests that may start now. */
  remaining: number;
  /** Unix time (seconds) when the bucket is full again. */
  reset: number;
  limit: number;
  concurrent: number;
  max_concurrent: number;
}

/** Which per-key limit refused a request: the requests-per-minute bucket, or the cap on concurrent streams. */
export type LimitCode = 'per_minute' | 'concurrent';

export type Admission =
  { ok: true; release: () => void } | { ok: false; reason: 'rate' | 'concurrency'; code: LimitCode; retryAfterMs: number; message: string };

/** The scheduler's KeyedLimiter with the gateway's wording for refusals and the quota it reports. */
export class KeyLimits {
  private readonly limiter: KeyedLimiter;

  constructor(
    private readonly o: { ratePerMinute: number; burst: number; maxConcurrent: number },
    private readonly now: () => number = Date.now,
  ) {
    this.limiter = new KeyedLimiter({ ...o, now });
  }

  /** One request for `key`; on success hold the slot until release(). */
  acquire(key: string): Admission {
    const a = this.limiter.acquire(key);
    if (a.ok) return a;
    if (a.reason === 'concurrency') {
      return {
        ...a,
        code: 'concurrent',
        message: `This key already has ${this.limiter.active(key)} streams running (the limit is ${this.o.maxConcurrent}). Wait for one to finish or cancel one, then retry.`,
      };
    }
    return {
      ...a,
      code: 'per_minute',
      message: `Too many requests for this key (${this.o.ratePerMinute}/min, burst ${this.o.burst}). Retry in ${Math.ceil(a.retryAfterMs / 1000)} s.`,
    };
  }

  quota(key: string): Quota {
    const avail = this.limiter.available(key);
    const msToFull = ((this.o.burst - avail) / this.o.ratePerMinute) * 60_000;
    return {
      remaining: Math.floor(avail),
      reset: Math.ceil((this.now() + msToFull) / 1000),
      limit: this.o.burst,
      concurrent: this.limiter.active(key),
      max_concurrent: this.o.maxConcurrent,
    };
  }
}

/** Seconds for a Retry-After header / retry_after field (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
