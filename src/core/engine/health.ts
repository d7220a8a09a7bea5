// Engine health. Each unique endpoint is checked once per interval (GET /v1/models, else GET /health,
// with the endpoint's key; llama.cpp also GET /props, which needs the key and gives the slot count; an
// engine whose /v1/models is public gets one 1-token request per configured key, to prove the key).
// - refused connection, a key the engine refuses (401/403) or a model still loading (503 "Loading
//   model", llama-server's answer on every route while it loads) -> unhealthy at once, with that
//   condition ('down', 'key_rejected', 'loading');
// - other failures: the first one while healthy -> degraded, 3 in a row -> unhealthy;
// - a success -> healthy.
// After a failure the endpoint is probed again with a short backoff (1 s doubling up to the interval),
// so an engine that comes back is healthy again within about a second of answering. A real request
// that finds the engine gone (markDown) counts as a failed check at once. 'change' {url, health,
// error?, condition?} is emitted on a change; 'capacity' {url, capacity?, load?} when those change.
import { EventEmitter } from 'node:events';
import type { EngineType, ModelHealth } from '../../shared/types';
import type { Logger } from '../log';
import { readCapacity, type EngineCapacity, type EngineLoad } from './capacity';
import { httpGet, httpPost, jsonObject, type GetResult } from './http-get';
import { normalizeBaseUrl } from './url';

/** Why an endpoint is not serving, beyond plain failures. */
export type EndpointCondition = 'down' | 'key_rejected' | 'loading';

export interface CheckResult {
  ok: boolean;
  error?: string;
  condition?: EndpointCondition;
  capacity?: EngineCapacity;
  load?: EngineLoad;
  /** The key was proven by a route that needs it (set when verifyKey asked for it). */
  keyVerified?: boolean;
}

export interface HealthChange {
  url: string;
  health: ModelHealth;
  error?: string;
  condition?: EndpointCondition;
}

export interface CapacityChange {
  url: string;
  capacity?: EngineCapacity;
  load?: EngineLoad;
}

export interface EndpointHealth {
  url: string;
  health: ModelHealth;
  consecutiveFailures: number;
  lastError?: string;
  lastCheckAt?: number;
  condition?: EndpointCondition;
  capacity?: EngineCapacity;
  load?: EngineLoad;
}

/** Failures in a row that make an endpoint unhealthy. */
export const UNHEALTHY_AFTER = 3;

/** The engine refuses our key. Shown as is in health, doctor and the console. */
export const KEY_REJECTED = 'engine refuses our key';

function describe(path: string, r: { status: number; error?: string }): string {
  return r.status ? `GET ${path} answered ${r.status}` : `GET ${path} failed (${r.error ?? 'no answer'})`;
}

/** llama-server's answer on every route while its model loads: 503 {"error":{"message":"Loading model"}}. */
export function isLoadingAnswer(r: GetResult): boolean {
  return r.status === 503 && /loading model/i.test(r.body);
}

function ownedBy(models: GetResult): string | undefined {
  const data = jsonObject(models)?.data;
  const first = Array.isArray(data) ? (data[0] as Record<string, unknown> | undefined) : undefined;
  return typeof first?.owned_by === 'string' ? first.owned_by : undefined;
}

function keyRejected(base: string, request: string, status: number, apiKey?: string): CheckResult {
  const fix = apiKey ? 'the api_key in models.json does not match the engine\'s key; fix it' : 'the engine needs a key: set "api_key" for this endpoint in models.json';
  return { ok: false, condition: 'key_rejected', error: `${KEY_REJECTED}: ${request} at ${base} answered ${status}; ${fix}` };
}

function loading(base: string): CheckResult {
  return { ok: false, condition: 'loading', error: `the engine at ${base} is loading its model (503 Loading model); it serves once loaded` };
}

/**
 * When /v1/models answers without any key, it proves nothing about ours: a 1-token completion (needs
 * the key wherever the engine checks keys) does. Returns the refusing status, or undefined.
 */
async function keyRefusedByCompletion(base: string, models: GetResult, timeoutMs: number, headers: Record<string, string>): Promise<number | undefined> {
  const open = await httpGet(`${base}/v1/models`, timeoutMs);
  if (open.status < 200 || open.status >= 300) return undefined; // /v1/models itself needs the key: proven
  const data = jsonObject(models)?.data;
  const model = Array.isArray(data) ? (data[0] as Record<string, unknown> | undefined)?.id : undefined;
  const r = await httpPost(`${base}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 }, timeoutMs, headers);
  return r === 401 || r === 403 ? r : undefined;
}

/**
 * One health check: GET /v1/models (with the key), else GET /health; llama.cpp engines also GET
 * /props, which needs the key (its /v1/models and /health are public) and reports total_slots.
 */
export async function checkEndpoint(
  url: string,
  timeoutMs = 10_000,
  apiKey?: string,
  engineType?: EngineType,
  opts: { verifyKey?: boolean } = {},
): Promise<CheckResult> {
  let base: string;
  try {
    base = normalizeBaseUrl(url);
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  let models = await httpGet(`${base}/v1/models`, timeoutMs, headers);
  // The engine cut this probe's own connection (it is going away or restarting): ask once more at
  // once, so an engine that is gone is 'down' now, not first 'degraded' from a reset it caused.
  if (models.status === 0 && !models.refused && models.error === 'ECONNRESET') models = await httpGet(`${base}/v1/models`, timeoutMs, headers);
  if (models.refused) return { ok: false, condition: 'down', error: `the engine at ${base} refused the connection (not running?)` };
  if (models.status === 401 || models.status === 403) return keyRejected(base, 'GET /v1/models', models.status, apiKey);
  if (isLoadingAnswer(models)) return loading(base);
  if (models.status >= 200 && models.status < 300) {
    const type = engineType && engineType !== 'unknown' && engineType !== 'openai' ? engineType : ownedBy(models) === 'llamacpp' ? 'llamacpp' : engineType;
    let props: Record<string, unknown> | undefined;
    if (type === 'llamacpp') {
      const p = await httpGet(`${base}/props`, timeoutMs, headers);
      if (p.status === 401 || p.status === 403) return keyRejected(base, 'GET /props', p.status, apiKey);
      if (isLoadingAnswer(p)) return loading(base);
      props = jsonObject(p);
    }
    if (apiKey && opts.verifyKey && type !== 'llamacpp') {
      const refused = await keyRefusedByCompletion(base, models, timeoutMs, headers);
      if (refused) return keyRejected(base, 'a 1-token POST /v1/chat/completions', refused, apiKey);
    }
    const { capacity, load } = await readCapacity(base, type, timeoutMs, headers, props);
    return { ok: true, ...(capacity ? { capacity } : {}), ...(load ? { load } : {}), ...(apiKey && opts.verifyKey ? { keyVerified: true } : {}) };
  }
  const health = await httpGet(`${base}/health`, timeoutMs, headers);
  if (isLoadingAnswer(health)) return loading(base);
  if (health.status >= 200 && health.status < 300) return { ok: true };
  return { ok: false, error: `the engine at ${base} is not answering: ${describe('/v1/models', models)}; ${describe('/health', health)}` };
}

export interface HealthMonitorOptions {
  /** Time between rounds (DESIGN: 30 s; config HealthCheckIntervalSeconds). */
  intervalMs: number;
  /** Per-check timeout (10 s). */
  timeoutMs?: number;
  /** First re-probe after a failure (1 s); doubles up to intervalMs. */
  retryMs?: number;
  log?: Logger;
}

export interface HealthTarget {
  url: string;
  apiKey?: string;
  engineType?: EngineType;
}

interface Entry extends EndpointHealth {
  apiKey?: string;
  /** The key passed a check that needs it (a 1-token request is made once per key, not every round). */
  keyVerified?: boolean;
  engineType?: EngineType;
  backoffMs: number;
  retry?: NodeJS.Timeout;
  checking?: Promise<void>;
}

function capacityKey(e: { capacity?: EngineCapacity; load?: EngineLoad }): string {
  return JSON.stringify([e.capacity?.slots, e.capacity?.source, e.load?.running, e.load?.waiting]);
}

export class HealthMonitor extends EventEmitter {
  private readonly entries = new Map<string, Entry>();
  private timer?: NodeJS.Timeout;
  private round?: Promise<void>;
  private running = false;

  constructor(private readonly opts: HealthMonitorOptions) {
    super();
  }

  private get retryMs(): number {
    return this.opts.retryMs ?? 1000;
  }

  /** The endpoints to watch (unique by base URL). New ones start healthy; removed ones are forgotten. */
  setEndpoints(endpoints: Array<string | HealthTarget>): void {
    const next = new Map<string, HealthTarget>();
    for (const ep of endpoints) {
      const t: HealthTarget = typeof ep === 'string' ? { url: ep } : ep;
      let url: string;
      try {
        url = normalizeBaseUrl(t.url);
      } catch {
        this.opts.log?.warn(`health: skipping endpoint with a bad URL: ${t.url}`);
        continue;
      }
      const prev = next.get(url);
      next.set(url, { url, apiKey: t.apiKey ?? prev?.apiKey, engineType: t.engineType ?? prev?.engineType });
    }
    for (const [url, e] of [...this.entries]) {
      if (next.has(url)) continue;
      clearTimeout(e.retry);
      this.entries.delete(url);
    }
    for (const [url, t] of next) {
      let e = this.entries.get(url);
      // A new endpoint, or a new key for one (models.json edited): look at it now, not a round later.
      const fresh = !e || e.apiKey !== t.apiKey;
      if (e) {
        if (e.apiKey !== t.apiKey) e.keyVerified = false;
        e.apiKey = t.apiKey;
        e.engineType = t.engineType;
      } else {
        e = { url, apiKey: t.apiKey, engineType: t.engineType, health: 'healthy', consecutiveFailures: 0, backoffMs: this.retryMs };
        this.entries.set(url, e);
      }
      if (fresh && this.running) void this.checkOne(e);
    }
  }

  private entry(url: string): Entry | undefined {
    try {
      return this.entries.get(normalizeBaseUrl(url));
    } catch {
      return undefined;
    }
  }

  health(url: string): ModelHealth | undefined {
    return this.entry(url)?.health;
  }

  states(): EndpointHealth[] {
    return [...this.entries.values()].map(({ apiKey: _k, keyVerified: _v, engineType: _t, backoffMs: _b, retry: _r, checking: _c, ...s }) => ({ ...s }));
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
    for (const e of this.entries.values()) {
      clearTimeout(e.retry);
      e.retry = undefined;
    }
  }

  /** One round over every endpoint; joins a round already under way. */
  checkNow(): Promise<void> {
    this.round ??= Promise.all([...this.entries.values()].map((e) => this.checkOne(e)))
      .then(() => undefined)
      .finally(() => (this.round = undefined));
    return this.round;
  }

  /**
   * A real request found the engine gone (connection refused/reset) or refusing our key: take the
   * endpoint out of service now and probe it with the short backoff.
   */
  markDown(url: string, condition: 'down' | 'key_rejected', error: string): void {
    const e = this.entry(url);
    if (!e) return;
    if (e.health === 'unhealthy' && e.condition === condition) return;
    this.apply(e, { ok: false, condition, error });
  }

  /** Something went wrong on a real request: check this endpoint now instead of at the next round. */
  probeNow(url: string): Promise<void> {
    const e = this.entry(url);
    return e ? this.checkOne(e) : Promise.resolve();
  }

  private checkOne(e: Entry): Promise<void> {
    e.checking ??= checkEndpoint(e.url, this.opts.timeoutMs ?? 10_000, e.apiKey, e.engineType, { verifyKey: !e.keyVerified })
      .then((r) => {
        if (r.keyVerified) e.keyVerified = true;
        if (this.entries.get(e.url) === e) this.apply(e, r);
      })
      .finally(() => (e.checking = undefined));
    return e.checking;
  }

  /** Probe again after the current backoff (doubling up to the interval) while the endpoint fails. */
  private scheduleRetry(e: Entry): void {
    if (!this.running || e.retry) return;
    const wait = e.backoffMs;
    e.backoffMs = Math.min(this.opts.intervalMs, e.backoffMs * 2);
    e.retry = setTimeout(() => {
      e.retry = undefined;
      if (this.entries.get(e.url) === e) void this.checkOne(e);
    }, wait);
    e.retry.unref();
  }

  private apply(e: Entry, r: CheckResult): void {
    const before = [e.health, e.condition];
    const capBefore = capacityKey(e);
    e.lastCheckAt = Date.now();
    if (r.ok) {
      e.consecutiveFailures = 0;
      e.lastError = undefined;
      e.condition = undefined;
      e.health = 'healthy';
      e.backoffMs = this.retryMs;
      clearTimeout(e.retry);
      e.retry = undefined;
      e.capacity = r.capacity;
      e.load = r.load;
    } else {
      e.consecutiveFailures++;
      e.lastError = r.error;
      e.condition = r.condition;
      if (r.condition || e.consecutiveFailures >= UNHEALTHY_AFTER) e.health = 'unhealthy';
      else if (e.health === 'healthy') e.health = 'degraded';
      this.scheduleRetry(e);
    }
    if (capacityKey(e) !== capBefore) {
      const c: CapacityChange = { url: e.url };
      if (e.capacity) c.capacity = e.capacity;
      if (e.load) c.load = e.load;
      this.emit('capacity', c);
    }
    if (e.health === before[0] && e.condition === before[1]) return;
    const change: HealthChange = { url: e.url, health: e.health };
    if (e.lastError) change.error = e.lastError;
    if (e.condition) change.condition = e.condition;
    this.opts.log?.info(`engine ${e.url} is ${e.condition ?? e.health}${e.lastError ? `: ${e.lastError}` : ''}`);
    this.emit('change', change);
  }
}
