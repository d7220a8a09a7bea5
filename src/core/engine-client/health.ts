// Engine health. Each unique endpoint is checked once per interval (GET /v1/models, else GET /health,
// with the endpoint's key; llama.cpp also GET /props, which needs the key and gives the slot count), all
// through the one engine HTTP client (http.ts). Health is kept per model as the Go provider keeps it
// (model_health_deepcheck_test.go): every chat model an endpoint serves gets its own deep check, a real
// one-token chat by the engine's own name through the engine-call service (purpose 'health': a free slot
// of that endpoint or none, never booked or billed), on its first check and every Nth after ([Agent]
// DeepHealthCheckEvery); the models of one endpoint are asked one after the other, never at once. An
// engine whose /v1/models is public gets that chat when its key is new, to prove the key.
// - refused connection, a key the engine refuses (401/403) or a model still loading (503 "Loading
//   model", llama-server's answer on every route while it loads) -> the endpoint unhealthy at once, with
//   that condition ('down', 'key_rejected', 'loading');
// - a model's deep chat failing (deep-probe.ts: no response, engine error, not served there) -> that model
//   unhealthy at that endpoint on its own ('deep' event), asked again on every check until it passes; its
//   neighbours on the same engine keep their own health. Only when every chat model of the endpoint fails
//   (one model behind a dead vLLM, an engine failing everything) is the endpoint itself unhealthy, with
//   that condition ('no_response', 'engine_error');
// - other failures: the first one while healthy -> degraded, 3 in a row -> unhealthy;
// - a success -> healthy.
// After a failure the endpoint is probed again with a short backoff (1 s doubling up to the interval),
// so an engine that comes back is healthy again within about a second of answering. A real request
// that finds the engine gone (markDown) counts as a failed check at once. 'change' {url, health,
// error?, condition?} is emitted on a change; 'capacity' {url, capacity?, load?} when those change;
// 'deep' {url, model, state} after each deep check.
import { EventEmitter } from 'node:events';
import type { EngineType, ModelHealth } from '../../shared/types';
import type { Logger } from '../base/log';
import { readCapacity, type EngineCapacity, type EngineLoad } from './capacity';
import { fetchEngine, jsonObject, type GetResult } from './http';
import { normalizeBaseUrl } from './url';
import { readProbe, type DeepFailure, type DeepProbe } from './deep-probe';
import type { EndpointCondition } from '../../shared/types';

export type { EndpointCondition };

/** The endpoint conditions under which it is suspect: every check asks a model for a token again, over the slot cap. */
const DEEP_CONDITIONS: ReadonlySet<EndpointCondition> = new Set(['no_response', 'engine_error']);

/** The deep check's failures that are the model's own at an endpoint; while one holds, every check asks that model again. */
const MODEL_FAILURES: ReadonlySet<string> = new Set(['no_response', 'engine_error', 'not_served']);
/** Of those, the ones that say the engine does not serve (not_served says the name is wrong, not the engine). */
const ENGINE_FAILURES: ReadonlySet<string> = new Set(['no_response', 'engine_error']);

export interface CheckResult {
  ok: boolean;
  error?: string;
  condition?: EndpointCondition;
  capacity?: EngineCapacity;
  load?: EngineLoad;
  /** The key was proven by a route that needs it (set when verifyKey asked for it). */
  keyVerified?: boolean;
  /** The engine's model list is public: only a completion proves the key (set when verifyKey asked for it). */
  keyUnproven?: boolean;
}

/** The last deep check of one model on one endpoint (the console's health cell, doctor). */
export interface DeepCheckState {
  /** The engine's own name of the model. */
  model: string;
  at: number;
  ok: boolean;
  code?: DeepFailure;
  error?: string;
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
  const fix = apiKey
    ? "the api_key in models.json does not match the engine's key; fix it"
    : 'the engine needs a key: set "api_key" for this endpoint in models.json';
  return { ok: false, condition: 'key_rejected', error: `${KEY_REJECTED}: ${request} at ${base} answered ${status}; ${fix}` };
}

function loading(base: string): CheckResult {
  return { ok: false, condition: 'loading', error: `the engine at ${base} is loading its model (503 Loading model); it serves once loaded` };
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
  const get = (path: string, withKey = true) => fetchEngine({ url: base, path, timeoutMs, ...(withKey && apiKey ? { apiKey } : {}) });
  let models = await get('/v1/models');
  // The engine cut this probe's own connection (it is going away or restarting): ask once more at
  // once, so an engine that is gone is 'down' now, not first 'degraded' from a reset it caused.
  if (models.status === 0 && !models.refused && models.error === 'ECONNRESET') models = await get('/v1/models');
  if (models.refused) return { ok: false, condition: 'down', error: `the engine at ${base} refused the connection (not running?)` };
  if (models.status === 401 || models.status === 403) return keyRejected(base, 'GET /v1/models', models.status, apiKey);
  if (isLoadingAnswer(models)) return loading(base);
  if (models.status >= 200 && models.status < 300) {
    const type = engineType && engineType !== 'unknown' && engineType !== 'openai' ? engineType : ownedBy(models) === 'llamacpp' ? 'llamacpp' : engineType;
    let props: Record<string, unknown> | undefined;
    if (type === 'llamacpp') {
      const p = await get('/props');
      if (p.status === 401 || p.status === 403) return keyRejected(base, 'GET /props', p.status, apiKey);
      if (isLoadingAnswer(p)) return loading(base);
      props = jsonObject(p);
    }
    // A model list that answers without any key proves nothing about ours: a completion must (the deep check).
    const unproven = !!apiKey && opts.verifyKey === true && type !== 'llamacpp' && (await get('/v1/models', false)).status === 200;
    const { capacity, load } = await readCapacity(base, type, timeoutMs, apiKey, props);
    const key = apiKey && opts.verifyKey ? (unproven ? { keyUnproven: true } : { keyVerified: true }) : {};
    return { ok: true, ...(capacity ? { capacity } : {}), ...(load ? { load } : {}), ...key };
  }
  const health = await get('/health');
  if (isLoadingAnswer(health)) return loading(base);
  if (health.status >= 200 && health.status < 300) return { ok: true };
  return { ok: false, error: `the engine at ${base} is not answering: ${describe('/v1/models', models)}; ${describe('/health', health)}` };
}

export interface HealthMonitorOptions {
  /** Time between rounds (DESIGN: 30 s; config HealthCheckIntervalSeconds). */
  intervalMs: number;
  /** The deep check: a one-token chat (absent: none, and a public model list leaves the key unproven). */
  probe?: DeepProbe;
  /** The deep check runs on the first check and every Nth after (0 = only to prove a new key). */
  deepEvery?: number;
  /** Per-check timeout (10 s). */
  timeoutMs?: number;
  /** First re-probe after a failure (1 s); doubles up to intervalMs. */
  retryMs?: number;
  log?: Logger;
}

/** A model the endpoint serves, as the deep check sees it. */
export interface HealthModel {
  /** The engine's own name (local_model, else the id). */
  name: string;
  /** Answers a chat completion (embedding, image and audio models are never probed with chat). */
  chat: boolean;
}

export interface HealthTarget {
  url: string;
  apiKey?: string;
  engineType?: EngineType;
  models?: HealthModel[];
}

interface Entry extends EndpointHealth {
  apiKey?: string;
  /** The key passed a check that needs it (a 1-token request is made once per key, not every round). */
  keyVerified?: boolean;
  engineType?: EngineType;
  models: HealthModel[];
  backoffMs: number;
  retry?: NodeJS.Timeout;
  checking?: Promise<void>;
  /** The check probeNow asked for while one was under way: begun when that one ends. */
  recheck?: Promise<void>;
  /** Per chat model (the engine's name): checks since its last deep check; absent: never checked. */
  sinceDeep: Map<string, number>;
  deep: Map<string, DeepCheckState>;
  /** This check's deep answers, told ('deep') once the endpoint's own verdict is applied. */
  told: DeepCheckState[];
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
      const models = [...(prev?.models ?? []), ...(t.models ?? [])].filter((m, i, all) => all.findIndex((x) => x.name === m.name) === i);
      next.set(url, { url, apiKey: t.apiKey ?? prev?.apiKey, engineType: t.engineType ?? prev?.engineType, models });
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
        e.models = t.models ?? [];
        for (const name of [...e.deep.keys()]) if (!e.models.some((m) => m.name === name)) e.deep.delete(name);
        for (const name of [...e.sinceDeep.keys()]) if (!e.models.some((m) => m.name === name)) e.sinceDeep.delete(name);
      } else {
        e = {
          url,
          apiKey: t.apiKey,
          engineType: t.engineType,
          models: t.models ?? [],
          health: 'healthy',
          consecutiveFailures: 0,
          backoffMs: this.retryMs,
          sinceDeep: new Map(),
          deep: new Map(),
          told: [],
        };
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
    return [...this.entries.values()].map((e) => {
      const s: EndpointHealth = { url: e.url, health: e.health, consecutiveFailures: e.consecutiveFailures };
      if (e.lastError !== undefined) s.lastError = e.lastError;
      if (e.lastCheckAt !== undefined) s.lastCheckAt = e.lastCheckAt;
      if (e.condition !== undefined) s.condition = e.condition;
      if (e.capacity !== undefined) s.capacity = e.capacity;
      if (e.load !== undefined) s.load = e.load;
      return s;
    });
  }

  /** The last deep check of each model probed at this endpoint. */
  deepStates(url: string): DeepCheckState[] {
    return [...(this.entry(url)?.deep.values() ?? [])].map((d) => ({ ...d }));
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

  /**
   * A real request got no headers within the headers deadline: the engine may be frozen (a stopped process
   * still accepts connections). No new request goes there (unhealthy, 'no_response') until a check,
   * started now, gets an answer and a token from it; the deep chat of that check does not wait for a free
   * slot, since the slots may be held by the very calls that hang.
   */
  markSuspect(url: string, error: string): void {
    const e = this.entry(url);
    if (!e) return;
    if (e.health === 'unhealthy' && e.condition === 'no_response') return;
    this.apply(e, { ok: false, condition: 'no_response', error: `${error}; no request is sent there until it answers a check` });
    void this.checkOne(e);
  }

  /**
   * Something went wrong on a real request, or discovery saw otherwise: check this endpoint now instead of at
   * the next round. A check already under way may have begun before what made the caller ask (its answer can
   * be an engine that has stopped since), so the answer is the check begun after it: one, however many ask.
   */
  probeNow(url: string): Promise<void> {
    const e = this.entry(url);
    if (!e) return Promise.resolve();
    if (!e.checking) return this.checkOne(e);
    e.recheck ??= e.checking.then(() => {
      e.recheck = undefined;
      return this.entries.get(e.url) === e ? this.checkOne(e) : undefined;
    });
    return e.recheck;
  }

  private checkOne(e: Entry): Promise<void> {
    e.checking ??= this.check(e)
      .then((r) => {
        if (this.entries.get(e.url) !== e) return;
        this.apply(e, r);
        // After the endpoint's verdict: a listener reading a model's health reads this check's whole answer.
        for (const state of e.told.splice(0)) this.emit('deep', { url: e.url, state });
      })
      .finally(() => (e.checking = undefined));
    return e.checking;
  }

  /** The cheap check, then (when the engine answered) the deep check of each chat model that is due. */
  private async check(e: Entry): Promise<CheckResult> {
    const r = await checkEndpoint(e.url, this.opts.timeoutMs ?? 10_000, e.apiKey, e.engineType, { verifyKey: !e.keyVerified });
    if (r.keyVerified) e.keyVerified = true;
    const chat = e.models.filter((m) => m.chat).sort((a, b) => a.name.localeCompare(b.name));
    for (const m of chat) if (e.sinceDeep.has(m.name)) e.sinceDeep.set(m.name, (e.sinceDeep.get(m.name) ?? 0) + 1);
    const probe = this.opts.probe;
    if (!r.ok || !probe) return r;
    // Under suspicion (no answer in time, or an engine error): asked at once, over the slot cap, since a
    // frozen engine holds every slot and a probe waiting for a free one would leave it "healthy" for minutes.
    const suspect = e.condition !== undefined && DEEP_CONDITIONS.has(e.condition);
    const due = this.dueModels(e, chat, r.keyUnproven === true || suspect);
    for (const model of due) {
      const outcome = await this.deepCheck(e, model, probe, suspect);
      // The key or a loading engine is the endpoint's; no answer may be a hung engine: the rest wait a check.
      if (outcome === 'stop') break;
      if (outcome && typeof outcome === 'object') return outcome;
    }
    return this.engineVerdict(e, chat) ?? r;
  }

  /**
   * The chat models whose deep check is due: each on its first check and every Nth after, a failing one on
   * every check until it passes; an unproven key or a suspect endpoint asks one model at least (the deep check may be off).
   */
  private dueModels(e: Entry, chat: HealthModel[], askOne: boolean): HealthModel[] {
    const every = this.opts.deepEvery ?? 0;
    const due = chat.filter((m) => {
      const last = e.deep.get(m.name);
      if (last && !last.ok && last.code && MODEL_FAILURES.has(last.code)) return true;
      if (every <= 0) return false;
      const since = e.sinceDeep.get(m.name);
      return since === undefined || since >= every;
    });
    const first = chat[0];
    if (askOne && due.length === 0 && first) due.push(first);
    return due;
  }

  /** One model's deep check: 'stop' when the rest should wait, a result when it fails the whole endpoint. */
  private async deepCheck(e: Entry, model: HealthModel, probe: DeepProbe, suspect: boolean): Promise<'stop' | CheckResult | undefined> {
    const target = { url: e.url, model: model.name, ...(e.apiKey ? { apiKey: e.apiKey } : {}) };
    const answer = await probe(target, { overCap: suspect });
    if (answer.busy) return 'stop'; // every slot is serving: asked again at the next check
    e.sinceDeep.set(model.name, 0);
    const v = readProbe(answer, target);
    if (v.ok || v.code !== 'key_rejected') e.keyVerified = e.keyVerified || !!e.apiKey;
    if (v.ok && v.ignored)
      this.opts.log?.debug(`health: the 1-token chat to ${model.name} at ${e.url} answered ${v.ignored} (${answer.error ?? ''}); not counted against health`);
    const state: DeepCheckState = { model: model.name, at: Date.now(), ok: v.ok, ...(v.ok ? {} : { code: v.code, error: v.error }) };
    const was = e.deep.get(model.name);
    if (this.entries.get(e.url) === e) {
      e.deep.set(model.name, state);
      if (!v.ok && was?.ok !== false) this.opts.log?.warn(`health: ${model.name} at ${e.url} fails its deep check (${v.code}): ${v.error}`);
      else if (v.ok && was?.ok === false) this.opts.log?.info(`health: ${model.name} at ${e.url} passes its deep check again`);
      e.told.push({ ...state });
    }
    if (v.ok) return undefined;
    if (v.code === 'key_rejected' || v.code === 'loading') return { ok: false, condition: v.code, error: v.error };
    return v.code === 'no_response' ? 'stop' : undefined;
  }

  /** Every chat model of the endpoint fails its deep check for the engine's sake: the engine does not serve. */
  private engineVerdict(e: Entry, chat: HealthModel[]): CheckResult | undefined {
    if (chat.length === 0) return undefined;
    const states = chat.map((m) => e.deep.get(m.name));
    if (!states.every((d) => d && !d.ok && d.code && ENGINE_FAILURES.has(d.code))) return undefined;
    const worst = states.find((d) => d?.code === 'no_response') ?? states[0];
    return { ok: false, condition: worst?.code as EndpointCondition, error: worst?.error ?? 'every model of this engine fails its deep check' };
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
      // An engine under suspicion that fails a plain check still does not answer: it stays 'no_response'.
      const stillSilent = !r.condition && e.condition === 'no_response';
      e.lastError = stillSilent ? `the engine at ${e.url} still does not answer: ${r.error ?? 'the check failed'}` : r.error;
      e.condition = stillSilent ? 'no_response' : r.condition;
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
