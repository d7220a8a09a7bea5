// The context window each model is served with, for the hub (v0.5 ModelInfo.context_length +
// context_source; the Go provider's model_context_source_test.go): without it the hub assumes the
// catalogue's maximum and routes prompts the engine will refuse. Sources, in order:
//   - models.json `context_length` (override: the owner knows something the engine will not say);
//   - what the engine states, read through the one engine HTTP client:
//       vLLM / SGLang  GET /v1/models -> data[].max_model_len                       (detected)
//       llama.cpp      GET /props -> default_generation_settings.n_ctx (per slot),
//                      else /v1/models data[].meta.n_ctx                             (engine)
//       Ollama         POST /api/show {model} -> its num_ctx parameter, else GET /api/ps -> the loaded
//                      model's context_length                                        (engine)
//     "detected" is only the window an engine publishes as max_model_len, as the Go node and the hub use
//     the word (mapping_mirror_test.go: llama.cpp and Ollama publish none there); a window read from
//     llama.cpp's or Ollama's own API is 'engine': known, its provenance told apart. Ollama's trained
//     maximum (model_info "<arch>.context_length") is never its serving window: past num_ctx a prompt is
//     silently truncated, so without num_ctx the window is unknown;
//   - unknown: probed, nothing found; pending: not probed yet. Neither goes on the wire.
// An endpoint whose engine type is not known yet (a models.json entry without discovery) is identified
// once with detectEngine, as the Go provider probes endpoints for its serving_engine.
import { EventEmitter } from 'node:events';
import type { EngineType } from '../../shared/types';
import { detectEngine } from './detect';
import { fetchEngine, jsonObject } from './http';

export type ContextSource = 'override' | 'detected' | 'engine' | 'unknown' | 'pending';

export interface ModelContext {
  length: number;
  source: ContextSource;
  /** Where the engine states it ("vLLM /v1/models max_model_len", "llama.cpp /props n_ctx", "Ollama num_ctx"). */
  via?: string;
}

/** A window an engine states. */
export interface EngineWindow {
  length: number;
  source: 'detected' | 'engine';
  via: string;
}

/** A plausible window: a positive integer below 100 M tokens (anything else is ignored as garbage). */
function plausible(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 && v < 100_000_000 ? v : undefined;
}

function modelEntry(models: Record<string, unknown> | undefined, model: string, type: EngineType): Record<string, unknown> | undefined {
  const data = models?.data;
  if (!Array.isArray(data)) return undefined;
  const items = data.filter((m): m is Record<string, unknown> => !!m && typeof m === 'object');
  // llama-server serves one model whatever name a request uses (it lists its file path or alias).
  return items.find((m) => m.id === model) ?? (type === 'llamacpp' && items.length === 1 ? items[0] : undefined);
}

/** Ollama's serving window: the model's num_ctx parameter, else what /api/ps says the loaded model runs with. */
async function ollamaWindow(
  base: string,
  model: string,
  get: (path: string, body?: unknown) => Promise<Record<string, unknown> | undefined>,
): Promise<EngineWindow | undefined> {
  const show = await get('/api/show', { model });
  const params = typeof show?.parameters === 'string' ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(show.parameters) : null;
  const numCtx = plausible(params ? Number(params[1]) : undefined);
  if (numCtx) return { length: numCtx, source: 'engine', via: 'Ollama num_ctx' };
  const ps = (await get('/api/ps'))?.models;
  const loaded = Array.isArray(ps) ? (ps as Array<Record<string, unknown>>).find((m) => m && (m.name === model || m.model === model)) : undefined;
  const running = plausible(loaded?.context_length);
  return running ? { length: running, source: 'engine', via: 'Ollama /api/ps context_length (loaded)' } : undefined;
}

/** What the engine at `baseUrl` states as `model`'s window, or undefined. */
export async function detectContextLength(
  baseUrl: string,
  model: string,
  type: EngineType,
  opts: { apiKey?: string; timeoutMs?: number } = {},
): Promise<EngineWindow | undefined> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const get = async (path: string, body?: unknown) =>
    jsonObject(
      await fetchEngine({
        url: baseUrl,
        path,
        timeoutMs,
        ...(body !== undefined ? { body: { json: body } } : {}),
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
      }),
    );
  if (type === 'ollama') return ollamaWindow(baseUrl, model, get);
  if (type === 'llamacpp') {
    const settings = (await get('/props'))?.default_generation_settings as Record<string, unknown> | undefined;
    const nCtx = plausible(settings?.n_ctx);
    if (nCtx) return { length: nCtx, source: 'engine', via: 'llama.cpp /props n_ctx' };
  }
  const entry = modelEntry(await get('/v1/models'), model, type);
  if (!entry) return undefined;
  const maxLen = plausible(entry.max_model_len);
  if (maxLen) return { length: maxLen, source: 'detected', via: '/v1/models max_model_len' };
  const meta = entry.meta as Record<string, unknown> | undefined;
  const metaCtx = plausible(meta?.n_ctx);
  return metaCtx ? { length: metaCtx, source: 'engine', via: 'llama.cpp /v1/models meta.n_ctx' } : undefined;
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
  /** What the engine itself runs for a model whose window models.json sets: the override is checked against it. */
  private readonly engineWindows = new Map<string, EngineWindow>();
  private readonly types = new Map<string, EngineType>();
  private running?: Promise<void>;

  constructor(private readonly opts: { timeoutMs?: number } = {}) {
    super();
  }

  get(model: string): ModelContext {
    return this.byModel.get(model) ?? { length: 0, source: 'pending' };
  }

  /** The window the engine reports for a model announced with models.json's context_length (undefined: not known). */
  engineWindow(model: string): EngineWindow | undefined {
    return this.engineWindows.get(model);
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
    for (const id of [...this.engineWindows.keys()]) if (!wanted.has(id) || !targets.find((t) => t.model === id)?.override) this.engineWindows.delete(id);
    for (const t of targets) {
      if (t.override) changed = this.set(t.model, { length: t.override, source: 'override' }) || changed;
      else if (this.byModel.get(t.model)?.source === 'override') this.byModel.delete(t.model);
    }
    if (changed) this.emit('change');
    // An override is announced as is, but the engine is still asked: an override it does not honour is a finding.
    const probe = targets.filter((t) =>
      t.override
        ? !(onlyMissing && this.engineWindows.has(t.model))
        : !(onlyMissing && (this.byModel.get(t.model)?.source === 'detected' || this.byModel.get(t.model)?.source === 'engine')),
    );
    const run = async (): Promise<void> => {
      let any = false;
      await Promise.all(
        probe.map(async (t) => {
          const windows: EngineWindow[] = [];
          let answered = false;
          for (const ep of t.endpoints) {
            const type = ep.engineType && ep.engineType !== 'unknown' ? ep.engineType : await this.identify(ep.url, ep.apiKey);
            const w = await detectContextLength(ep.url, ep.localModel ?? t.model, type ?? 'openai', {
              ...(ep.apiKey ? { apiKey: ep.apiKey } : {}),
              ...(this.opts.timeoutMs ? { timeoutMs: this.opts.timeoutMs } : {}),
            });
            answered = true;
            if (w) windows.push(w);
          }
          // The smallest window among the endpoints: a prompt the hub routes must fit wherever it lands.
          const least = windows.reduce<EngineWindow | undefined>((min, w) => (!min || w.length < min.length ? w : min), undefined);
          if (t.override) {
            if (least && this.engineWindows.get(t.model)?.length !== least.length) {
              this.engineWindows.set(t.model, least);
              any = true;
            }
            return;
          }
          const next: ModelContext = least ? { ...least } : { length: 0, source: answered ? 'unknown' : 'pending' };
          const prev = this.byModel.get(t.model);
          if (prev?.source === 'override') return;
          // A window once known stays until the engine states another one: a busy or restarting engine
          // that does not answer a probe has not changed its window.
          if ((prev?.source === 'detected' || prev?.source === 'engine') && !least) return;
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

  private async identify(url: string, apiKey?: string): Promise<EngineType | undefined> {
    const known = this.types.get(url);
    if (known) return known;
    const info = await detectEngine(url, this.opts.timeoutMs ?? 2000, 'config', apiKey).catch(() => null);
    if (info?.reachable && info.type !== 'unknown') this.types.set(url, info.type);
    return info?.reachable ? info.type : undefined;
  }

  private set(model: string, next: ModelContext): boolean {
    const prev = this.byModel.get(model);
    this.byModel.set(model, next);
    return prev?.length !== next.length || prev?.source !== next.source || prev?.via !== next.via;
  }
}
