// Per-key limits of the gateway (seed 001): a token bucket (requests/min with a burst) and a cap on
// concurrent streams. Also reports the quota ({remaining, reset}) clients see. Keys are the gateway's
// own API key names, a handful, so nothing needs evicting.
import { TokenBucket } from '../scheduler/token-bucket';

export interface Quota {
  /** Whole requests that may start now. */
  remaining: number;
  /** Unix time (seconds) when the bucket is full again. */
  reset: number;
  limit: number;
  concurrent: number;
  max_concurrent: number;
}

export type Admission =
  | { ok: true; release: () => void }
  | { ok: false; reason: 'rate' | 'concurrency'; retryAfterMs: number; message: string };

interface KeyState {
  bucket: TokenBucket;
  active: number;
}

export class KeyLimits {
  private readonly keys = new Map<string, KeyState>();

  constructor(
    private readonly o: { ratePerMinute: number; burst: number; maxConcurrent: number },
    private readonly now: () => number = Date.now,
  ) {}

  private state(key: string): KeyState {
    let s = this.keys.get(key);
    if (!s) {
      s = { bucket: new TokenBucket(this.o.ratePerMinute, this.o.burst, this.now), active: 0 };
      this.keys.set(key, s);
    }
    return s;
  }

  /** One request for `key`; on success hold the slot until release(). */
  acquire(key: string): Admission {
    const s = this.state(key);
    if (s.active >= this.o.maxConcurrent) {
      return {
        ok: false,
        reason: 'concurrency',
        retryAfterMs: 1000,
        message: `This key already has ${s.active} streams running (the limit is ${this.o.maxConcurrent}). Wait for one to finish or cancel one, then retry.`,
      };
    }
    const t = s.bucket.take();
    if (!t.ok) {
      return {
        ok: false,
        reason: 'rate',
        retryAfterMs: t.retryAfterMs,
        message: `Too many requests for this key (${this.o.ratePerMinute}/min, burst ${this.o.burst}). Retry in ${Math.ceil(t.retryAfterMs / 1000)} s.`,
      };
    }
    s.active++;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        s.active--;
      },
    };
  }

  quota(key: string): Quota {
    const s = this.state(key);
    const avail = s.bucket.available();
    const msToFull = ((this.o.burst - avail) / this.o.ratePerMinute) * 60_000;
    return {
      remaining: Math.floor(avail),
      reset: Math.ceil((this.now() + msToFull) / 1000),
      limit: this.o.burst,
      concurrent: s.active,
      max_concurrent: this.o.maxConcurrent,
    };
  }
}

/** Seconds for a Retry-After header / retry_after field (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
