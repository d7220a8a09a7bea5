// Figures fetched from the platform and kept: the last good answer is served until the next good one
// ("stale beats blank", as the Go provider's provider_stats.go puts it), with when it was fetched and
// why it is stale. A good answer is kept for `ttlMs`; after a failure the next try waits `retryMs`
// (30 s in the Go provider). The last good answer is also written to a file (0600), so a restart
// while the platform is down still shows it, marked stale. Failures go to the log, once per change.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import type { Logger } from '../base/log';
import { writeJsonAtomic } from '../config/atomic-file';

export type Fetched<T> = { ok: true; value: T } | { ok: false; error: string };

export interface CachedView<T> {
  value: T | null;
  /** When `value` was fetched (epoch ms); null when nothing good was ever fetched. */
  asOf: number | null;
  /** true when the last try failed, or the value is older than twice its lifetime. */
  stale: boolean;
  /** The last failure, in plain words, while stale because of it. */
  error?: string;
}

/** What each client of a platform figure (rates, stats) is given. */
export interface PlatformFiguresOptions {
  serviceUrl: () => string;
  log: Logger;
  cacheFile?: string;
  now?: () => number;
  ttlMs?: number;
  retryMs?: number;
  timeoutMs?: number;
}

/** The CachedFigures options every platform client passes through the same way (its own TTL as default). */
export function cacheKnobs(
  o: PlatformFiguresOptions,
  label: string,
  defaultTtlMs: number,
): Pick<CachedFiguresOptions<unknown>, 'label' | 'log' | 'ttlMs' | 'retryMs' | 'cacheFile' | 'now'> {
  return {
    label,
    log: o.log,
    ttlMs: o.ttlMs ?? defaultTtlMs,
    ...(o.retryMs !== undefined ? { retryMs: o.retryMs } : {}),
    ...(o.cacheFile ? { cacheFile: o.cacheFile } : {}),
    ...(o.now ? { now: o.now } : {}),
  };
}

export interface CachedFiguresOptions<T> {
  label: string;
  fetch: () => Promise<Fetched<T>>;
  /** Re-checks a value read back from the cache file; null refuses it. */
  revive: (json: unknown) => T | null;
  log: Logger;
  ttlMs: number;
  retryMs?: number;
  cacheFile?: string;
  now?: () => number;
}

export class CachedFigures<T> extends EventEmitter<{ change: [CachedView<T>] }> {
  private value: T | null = null;
  private asOf: number | null = null;
  private error: string | undefined;
  private nextTry = 0;
  private inFlight: Promise<CachedView<T>> | null = null;
  private readonly now: () => number;

  constructor(private readonly o: CachedFiguresOptions<T>) {
    super();
    this.now = o.now ?? Date.now;
    this.load();
  }

  view(): CachedView<T> {
    const old = this.asOf !== null && this.now() - this.asOf > 2 * this.o.ttlMs;
    return {
      value: this.value,
      asOf: this.asOf,
      stale: this.value !== null && (this.error !== undefined || old),
      ...(this.error ? { error: this.error } : {}),
    };
  }

  /** Fetches when the cached value is due (or `force`); otherwise answers from the cache. Never throws. */
  get(force = false): Promise<CachedView<T>> {
    if (this.inFlight) return this.inFlight;
    if (!force && this.now() < this.nextTry) return Promise.resolve(this.view());
    this.inFlight = this.refresh().finally(() => (this.inFlight = null));
    return this.inFlight;
  }

  private async refresh(): Promise<CachedView<T>> {
    let r: Fetched<T>;
    try {
      r = await this.o.fetch();
    } catch (e) {
      r = { ok: false, error: (e as Error).message };
    }
    if (r.ok) {
      const recovered = this.error !== undefined;
      this.value = r.value;
      this.asOf = this.now();
      this.error = undefined;
      this.nextTry = this.asOf + this.o.ttlMs;
      if (recovered) this.o.log.info(`${this.o.label}: the platform answers again.`);
      this.save();
    } else {
      if (r.error !== this.error) {
        const kept = this.asOf !== null ? ` Keeping the figures from ${new Date(this.asOf).toISOString()}, marked stale.` : '';
        this.o.log.warn(`${this.o.label} unavailable: ${r.error}.${kept} Serving is not affected.`);
      }
      this.error = r.error;
      this.nextTry = this.now() + (this.o.retryMs ?? 30_000);
    }
    const v = this.view();
    this.emit('change', v);
    return v;
  }

  private load(): void {
    const file = this.o.cacheFile;
    if (!file || !fs.existsSync(file)) return;
    try {
      const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as { asOf?: unknown; value?: unknown };
      const value = this.o.revive(saved.value);
      if (value === null || typeof saved.asOf !== 'number' || !Number.isFinite(saved.asOf)) throw new Error('unexpected content');
      this.value = value;
      this.asOf = saved.asOf;
      this.error = 'a saved copy, not checked again yet';
    } catch (e) {
      this.o.log.warn(`${this.o.label}: ignoring the saved copy ${file} (${(e as Error).message}).`);
    }
  }

  private save(): void {
    const file = this.o.cacheFile;
    if (!file) return;
    try {
      writeJsonAtomic(file, { asOf: this.asOf, value: this.value }, 0);
    } catch (e) {
      this.o.log.debug(`${this.o.label}: could not save a copy to ${file}: ${(e as Error).message}`);
    }
  }
}
