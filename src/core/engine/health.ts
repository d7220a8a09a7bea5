// Engine health as the Go provider does it: each unique endpoint once per interval, GET /v1/models
// (fallback GET /health); the first failure while healthy -> degraded, 3 consecutive failures ->
// unhealthy, a success -> healthy. 'change' {url, health, error?} is emitted only on a change.
import { EventEmitter } from 'node:events';
import type { ModelHealth } from '../../shared/types';
import type { Logger } from '../log';
import { httpGet } from './http-get';
import { normalizeBaseUrl } from './url';

export interface CheckResult {
  ok: boolean;
  error?: string;
}

export interface HealthChange {
  url: string;
  health: ModelHealth;
  error?: string;
}

export interface EndpointHealth {
  url: string;
  health: ModelHealth;
  consecutiveFailures: number;
  lastError?: string;
  lastCheckAt?: number;
}

/** Failures in a row that make an endpoint unhealthy. */
export const UNHEALTHY_AFTER = 3;

function describe(path: string, r: { status: number; error?: string }): string {
  return r.status ? `GET ${path} answered ${r.status}` : `GET ${path} failed (${r.error ?? 'no answer'})`;
}

/** One health check: GET /v1/models, else GET /health. ok when either answers 2xx. */
export async function checkEndpoint(url: string, timeoutMs = 10_000, apiKey?: string): Promise<CheckResult> {
  let base: string;
  try {
    base = normalizeBaseUrl(url);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const headers = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const models = await httpGet(`${base}/v1/models`, timeoutMs, headers);
  if (models.status >= 200 && models.status < 300) return { ok: true };
  if (models.refused) return { ok: false, error: `the engine at ${base} refused the connection (not running?)` };
  const health = await httpGet(`${base}/health`, timeoutMs, headers);
  if (health.status >= 200 && health.status < 300) return { ok: true };
  return { ok: false, error: `the engine at ${base} is not answering: ${describe('/v1/models', models)}; ${describe('/health', health)}` };
}

export interface HealthMonitorOptions {
  /** Time between rounds (DESIGN: 30 s; config HealthCheckIntervalSeconds). */
  intervalMs: number;
  /** Per-check timeout (10 s). */
  timeoutMs?: number;
  log?: Logger;
}

interface Entry extends EndpointHealth {
  apiKey?: string;
}

export class HealthMonitor extends EventEmitter {
  private readonly entries = new Map<string, Entry>();
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private running = false;

  constructor(private readonly opts: HealthMonitorOptions) {
    super();
  }

  /** The endpoints to watch (unique by base URL). New ones start healthy; removed ones are forgotten. */
  setEndpoints(endpoints: Array<string | { url: string; apiKey?: string }>): void {
    const next = new Map<string, string | undefined>();
    for (const ep of endpoints) {
      const raw = typeof ep === 'string' ? ep : ep.url;
      let url: string;
      try {
        url = normalizeBaseUrl(raw);
      } catch {
        this.opts.log?.warn(`health: skipping endpoint with a bad URL: ${raw}`);
        continue;
      }
      const key = typeof ep === 'string' ? undefined : ep.apiKey;
      if (!next.has(url) || key) next.set(url, key);
    }
    for (const url of [...this.entries.keys()]) if (!next.has(url)) this.entries.delete(url);
    for (const [url, apiKey] of next) {
      const e = this.entries.get(url);
      if (e) e.apiKey = apiKey;
      else this.entries.set(url, { url, apiKey, health: 'healthy', consecutiveFailures: 0 });
    }
  }

  health(url: string): ModelHealth | undefined {
    try {
      return this.entries.get(normalizeBaseUrl(url))?.health;
    } catch {
      return undefined;
    }
  }

  states(): EndpointHealth[] {
    return [...this.entries.values()].map(({ apiKey: _k, ...s }) => ({ ...s }));
  }

  /** Check at once, then every intervalMs. */
  start(): void {
    if (this.running) return;
    this.running = true;
    void this.checkNow();
    this.timer = setInterval(() => void this.checkNow(), this.opts.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round over every endpoint; joins a round already under way. */
  checkNow(): Promise<void> {
    this.round ??= this.runRound().finally(() => (this.round = undefined));
    return this.round;
  }

  private async runRound(): Promise<void> {
    const list = [...this.entries.values()];
    await Promise.all(
      list.map(async (e) => {
        const r = await checkEndpoint(e.url, this.opts.timeoutMs ?? 10_000, e.apiKey);
        if (this.entries.get(e.url) === e) this.apply(e, r);
      }),
    );
  }

  private apply(e: Entry, r: CheckResult): void {
    const before = e.health;
    e.lastCheckAt = Date.now();
    if (r.ok) {
      e.consecutiveFailures = 0;
      e.lastError = undefined;
      e.health = 'healthy';
    } else {
      e.consecutiveFailures++;
      e.lastError = r.error;
      if (e.consecutiveFailures >= UNHEALTHY_AFTER) e.health = 'unhealthy';
      else if (e.health === 'healthy') e.health = 'degraded';
    }
    if (e.health === before) return;
    const change: HealthChange = { url: e.url, health: e.health };
    if (e.lastError) change.error = e.lastError;
    this.opts.log?.info(`engine ${e.url} is ${e.health}${e.lastError ? `: ${e.lastError}` : ''}`);
    this.emit('change', change);
  }
}
