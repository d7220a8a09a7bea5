// The context window each model is served with, for the hub (v0.5 ModelInfo.context_length +
// context_source; the Go provider's model_context_source_test.go): without it the hub assumes the
// catalogue's maximum and routes prompts the engine will refuse. Sources, in order:
//   - models.json `context_length` (override: the owner knows something the engine will not say);
//   - what the engine reports (detected):
//       vLLM / SGLang  GET /v1/models -> data[].max_model_len
//       llama.cpp      GET /props -> default_generation_settings.n_ctx (per slot), else /v1/models data[].meta.n_ctx
//       Ollama         POST /api/show {model} -> the num_ctx parameter when set, else model_info["<arch>.context_length"]
//   - unknown: probed, nothing found; pending: not probed yet. Neither goes on the wire.
// An endpoint whose engine type is not known yet (a models.json entry without discovery) is identified
// once with detectEngine, as the Go provider probes endpoints for its serving_engine.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import type { EngineType } from '../../shared/types';
import { detectEngine } from './detect';
import { httpGet, jsonObject } from './http-get';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

export type ContextSource = 'override' | 'detected' | 'unknown' | 'pending';

export interface ModelContext {
  length: number;
  source: ContextSource;
}

/** A plausible window: a positive integer below 100 M tokens (anything else is ignored as garbage). */
function plausible(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 100_000_000 ? v : undefined;
}

function postJson(url: string, body: unknown, timeoutMs: number, headers: Record<string, string>): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return resolve(undefined);
    }
    const text = JSON.stringify(body);
    const lib = u.protocol === 'https:' ? https : http;
    const req = lib.request(u, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers } }, (res) => {
      const parts: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 4 * 1024 * 1024) req.destroy();
        else parts.push(c);
      });
      res.on('end', () => {
        clearTimeout(timer);
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) return resolve(undefined);
        try {
          const v: unknown = parseJson(Buffer.concat(parts), JSON_LIMITS.engine);
          resolve(v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
        } catch {
          resolve(undefined);
        }
      });
      res.on('error', () => resolve(undefined));
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve(undefined);
    }, timeoutMs);
    req.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    req.end(text);
  });
}

function modelEntry(models: Record<string, unknown> | undefined, model: string, type: EngineType): Record<string, unknown> | undefined {
  const data = models?.data;
  if (!Array.isArray(data)) return undefined;
  const items = data.filter((m): m is Record<string, unknown> => !!m && typeof m === 'object');
  // llama-server serves one model whatever name a request uses (it lists its file path or alias).
  return items.find((m) => m.id === model) ?? (type === 'llamacpp' && items.length === 1 ? items[0] : undefined);
}

/** What the engine at `baseUrl` reports as `model`'s window, or undefined. */
export async function detectContextLength(baseUrl: string, model: string, type: EngineType, opts: { apiKey?: string; timeoutMs?: number } = {}): Promise<number | undefined> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const headers: Record<string, string> = opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {};
  const base = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  if (type === 'ollama') {
    const show = await postJson(`${base}/api/show`, { model }, timeoutMs, headers);
    const params = typeof show?.parameters === 'string' ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(show.parameters) : null;
    const numCtx = plausible(params ? Number(params[1]) : undefined);
    if (numCtx) return numCtx;
    const info = show?.model_info;
    if (info && typeof info === 'object') {
      for (const [k, v] of Object.entries(info as Record<string, unknown>)) if (k.endsWith('.context_length') && plausible(v)) return v as number;
    }
    return undefined;
  }
  if (type === 'llamacpp') {
    const props = jsonObject(await httpGet(`${base}/props`, timeoutMs, headers));
    const settings = props?.default_generation_settings as Record<string, unknown> | undefined;
    const nCtx = plausible(settings?.n_ctx);
    if (nCtx) return nCtx;
  }
  const entry = modelEntry(jsonObject(await httpGet(`${base}/v1/models`, timeoutMs, headers)), model, type);
  if (!entry) return undefined;
  const meta = entry.meta as Record<string, unknown> | undefined;
  return plausible(entry.max_model_len) ?? plausible(meta?.n_ctx);
}

export interface ContextTarget {
  /** The hub-facing model id. */
  model: string;
  endpoints: Array<{ url: string; localModel?: string; apiKey?: string; engineType?: EngineType }>;
  /** models.json `context_length`. */
  override?: number;
}

/**
 * The windows of the announced models. refresh() probes what is not known yet (and re-probes on
 * demand); 'change' fires when a model's window or source changed, so the agent re-registers.
 */
export class ContextLengths extends EventEmitter {
  private readonly byModel = new Map<string, ModelContext>();
  private readonly types = new Map<string, EngineType>();
  private running?: Promise<void>;

  constructor(private readonly opts: { timeoutMs?: number } = {}) {
    super();
  }

  get(model: string): ModelContext {
    return this.byModel.get(model) ?? { length: 0, source: 'pending' };
  }

  /** The engine type found by probing an endpoint that had none. */
  typeOf(url: string): EngineType | undefined {
    return this.types.get(url);
  }

  /**
   * Sets overrides at once and probes the rest (with onlyMissing, only models without a detected
   * window); a probe already running is waited for, then this one runs.
   */
  refresh(targets: ContextTarget[], onlyMissing = false): Promise<void> {
    let changed = false;
    const wanted = new Set(targets.map((t) => t.model));
    for (const id of [...this.byModel.keys()]) if (!wanted.has(id)) this.byModel.delete(id);
    for (const t of targets) {
      if (t.override) changed = this.set(t.model, { length: t.override, source: 'override' }) || changed;
      else if (this.byModel.get(t.model)?.source === 'override') this.byModel.delete(t.model);
    }
    if (changed) this.emit('change');
    const probe = targets.filter((t) => !t.override && !(onlyMissing && this.byModel.get(t.model)?.source === 'detected'));
    const run = async (): Promise<void> => {
      let any = false;
      await Promise.all(
        probe.map(async (t) => {
          const lengths: number[] = [];
          let answered = false;
          for (const ep of t.endpoints) {
            const type = ep.engineType && ep.engineType !== 'unknown' ? ep.engineType : await this.identify(ep.url);
            const n = await detectContextLength(ep.url, ep.localModel ?? t.model, type ?? 'openai', { apiKey: ep.apiKey, timeoutMs: this.opts.timeoutMs });
            answered = true;
            if (n) lengths.push(n);
          }
          // The smallest window among the endpoints: a prompt the hub routes must fit wherever it lands.
          const next: ModelContext = lengths.length ? { length: Math.min(...lengths), source: 'detected' } : { length: 0, source: answered ? 'unknown' : 'pending' };
          const prev = this.byModel.get(t.model);
          if (prev?.source === 'override') return;
          // A window once detected stays until the engine reports another one: a busy or restarting
          // engine that does not answer a probe has not changed its window.
          if (prev?.source === 'detected' && next.source !== 'detected') return;
          any = this.set(t.model, next) || any;
        }),
      );
      if (any) this.emit('change');
    };
    const chained = (this.running ?? Promise.resolve()).then(run, run);
    this.running = chained;
    void chained.finally(() => {
      if (this.running === chained) this.running = undefined;
    });
    return chained;
  }

  private async identify(url: string): Promise<EngineType | undefined> {
    const known = this.types.get(url);
    if (known) return known;
    const info = await detectEngine(url, this.opts.timeoutMs ?? 2000, 'config').catch(() => null);
    if (info?.reachable && info.type !== 'unknown') this.types.set(url, info.type);
    return info?.reachable ? info.type : undefined;
  }

  private set(model: string, next: ModelContext): boolean {
    const prev = this.byModel.get(model);
    this.byModel.set(model, next);
    return prev?.length !== next.length || prev?.source !== next.source;
  }
}
