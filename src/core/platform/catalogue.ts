// The network's model catalogue: GET {ServiceURL}/api/v1/models?page_size=200 → {data: {list: [{id,
// slug, name, category, active}]}} (public; the Go provider's FetchSwanModels). The hub routes only
// the ids it lists: a model announced under another name gets no traffic. Local engine names are
// matched to catalogue ids as the Go provider's setup does (internal/setup/discovery.go), with the
// engine's own report as the evidence beyond the name (matchModel). A models.json key is an explicit
// mapping and wins: it is not re-matched, only checked.
// The answer is validated, kept for 30 minutes, fetched with a 10 s timeout; a failed refresh keeps
// the last good list.
import { z } from 'zod';
import type { CatalogueMatchView, CatalogueView } from '../../shared/views/snapshot';
import type { EngineModelMeta } from '../../shared/types';
import type { Logger } from '../base/log';
import { AnswerError } from '../http/answer-error';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';
import { readCapped } from '../http/read-body';

/** The largest catalogue answer read. */
const MAX_CATALOGUE_BYTES = 8 * 1024 * 1024;

export interface CatalogueModel {
  id: string;
  slug?: string;
  name?: string;
  category?: string;
}

const entry = z
  .object({
    id: z.string().min(1).max(256),
    slug: z.string().max(256).optional().catch(undefined),
    name: z.string().max(256).optional().catch(undefined),
    category: z.string().max(64).optional().catch(undefined),
    active: z.boolean().optional(),
  })
  .passthrough();

const answer = z.object({ data: z.object({ list: z.array(z.unknown()).max(10_000) }).passthrough() }).passthrough();

/** Validates a catalogue answer; entries that are not well formed are skipped, inactive ones left out. */
export function parseCatalogue(json: unknown): { models: CatalogueModel[]; skipped: number } {
  const a = answer.safeParse(json);
  if (!a.success) throw new AnswerError('no_model_list', 'the answer has no data.list array of models', 'data.list');
  const models: CatalogueModel[] = [];
  let skipped = 0;
  for (const raw of a.data.data.list) {
    const e = entry.safeParse(raw);
    if (!e.success) {
      skipped++;
      continue;
    }
    if (e.data.active === false) continue;
    models.push({
      id: e.data.id,
      ...(e.data.slug ? { slug: e.data.slug } : {}),
      ...(e.data.name ? { name: e.data.name } : {}),
      ...(e.data.category ? { category: e.data.category } : {}),
    });
  }
  return { models, skipped };
}

// ---- matching (the rules of discovery.go, in our words) ----
const ORG_PREFIXES = ['meta-llama/', 'mistralai/', 'qwen/', 'deepseek-ai/', 'google/', 'microsoft/', 'nvidia/'];
const SUFFIXES = [':latest', '-instruct', '-chat', '-base', '-hf', '-gguf'];
/** Normalised names that normalisation alone cannot bring to the catalogue id. */
const ALIASES: Record<string, string> = {
  'llama-3-1-8b': 'meta-llama/Llama-3.1-8B-Instruct',
  'llama-3-2-3b': 'meta-llama/Llama-3.2-3B-Instruct',
  'llama-3-2-1b': 'meta-llama/Llama-3.2-1B-Instruct',
  'llama-3-3-70b': 'meta-llama/Llama-3.3-70B-Instruct',
  'qwen-2-5-7b': 'Qwen/Qwen2.5-7B-Instruct',
  'qwen-2-5-14b': 'Qwen/Qwen2.5-14B-Instruct',
  'qwen-2-5-32b': 'Qwen/Qwen2.5-32B-Instruct',
  'qwen-2-5-72b': 'Qwen/Qwen2.5-72B-Instruct',
  'mistral-small-24b': 'mistralai/Mistral-Small-3.2-24B-Instruct-2506',
  'deepseek-r-1': 'deepseek-ai/DeepSeek-R1-0528',
  'deepseek-v-3': 'deepseek-ai/DeepSeek-V3-0324',
};
const CANONICAL: Record<string, string> = { 'mistral-7b-v0-1': 'mistral-7b', 'mistral-7b-v0-2': 'mistral-7b', 'mistral-7b-v0-3': 'mistral-7b' };
const SIZES = [
  '405b',
  '70b',
  '65b',
  '34b',
  '33b',
  '32b',
  '30b',
  '27b',
  '24b',
  '14b',
  '13b',
  '12b',
  '11b',
  '8b',
  '7b',
  '6b',
  '4b',
  '3b',
  '2b',
  '1b',
  '0-5b',
  '500m',
  'mini',
  'small',
  'medium',
  'large',
  'xl',
  'xxl',
];

/** "meta-llama/Llama-3.2-3B-Instruct", "llama3.2:3b" → "llama-3-2-3b". */
export function normalizeModelName(name: string): string {
  let n = name.toLowerCase();
  for (const p of ORG_PREFIXES) if (n.startsWith(p)) n = n.slice(p.length);
  for (const s of SUFFIXES) if (n.endsWith(s)) n = n.slice(0, -s.length);
  n = n
    .replace(/[:_.]/g, '-')
    .replace(/([a-z])(?=[0-9])/g, '$1-')
    .replace(/-{2,}/g, '-');
  n = CANONICAL[n] ?? n;
  return n.replace(/^-+|-+$/g, '');
}

function familyAndVersion(s: string): { family: string; version: string } {
  const parts = s.split('-');
  let start = parts.length;
  for (let i = parts.length - 1; i >= 0; i--) {
    if (/^\d+$/.test(parts[i]!) || (parts[i] === 'v' && i < parts.length - 1)) start = i;
    else break;
  }
  if (start === 0) return { family: s, version: '' };
  let version = parts.slice(start);
  if (version[0] === 'v') version = version.slice(1);
  return { family: parts.slice(0, start).join('-'), version: version.join('-') };
}

/** family / version / size of a normalised name ("llama-3-2-3b" → llama, 3-2, 3b). */
export function modelInfo(n: string): { family: string; version: string; size: string } {
  for (const size of SIZES) {
    const i = n.indexOf(size);
    if (i >= 0) return { ...familyAndVersion(n.slice(0, i).replace(/^-+|-+$/g, '')), size };
  }
  return { ...familyAndVersion(n), size: '' };
}

/** A size token ("8b", "0-5b", "500m") as a parameter count; undefined for words (mini, small…) and none. */
export function sizeParameters(size: string): number | undefined {
  const m = /^(\d+(?:-\d+)?)([bm])$/.exec(size);
  if (!m) return undefined;
  return Number(m[1]!.replace('-', '.')) * (m[2] === 'b' ? 1e9 : 1e6);
}

/** Quantization named in an id or reported by an engine, in one vocabulary (undefined: none said). */
export function quantOf(text: string | undefined): string | undefined {
  const t = (text ?? '').toLowerCase();
  if (/\bawq\b|gptq|int4|w4a16|q4_|q4-|iq4|\bq4\b/.test(t)) return 'int4';
  if (/int8|w8a8|q8_|q8-|\bq8\b/.test(t)) return 'int8';
  if (/fp8/.test(t)) return 'fp8';
  if (/bf16/.test(t)) return 'bf16';
  if (/\bf16\b|fp16/.test(t)) return 'fp16';
  if (/\bf32\b|fp32/.test(t)) return 'fp32';
  return undefined;
}

/** Whether two parameter counts are the same model size (a 7.6 B Qwen is a "7B"; 8.03 B Llama an "8B"). */
function sameSize(a: number, b: number): boolean {
  return a / b >= 0.8 && a / b <= 1.25;
}

/** An engine's model id that names a published model ("org/name"), as vLLM and SGLang report them; not a file. */
function isRepoId(name: string): boolean {
  return /^[\w.-]+\/[\w.-]+$/.test(name) && !/\.(gguf|bin|safetensors|ggml)$/i.test(name);
}

/** What is known of a local model: from the engine's own report first; a published repo id also speaks for itself. */
interface Evidence {
  family?: string;
  version?: string;
  parameters?: number;
  quant?: string;
}

function evidenceOf(local: string, meta?: EngineModelMeta): Evidence {
  const named = modelInfo(normalizeModelName(local));
  const fromName = isRepoId(local);
  const reportedFamily = meta?.family ? familyAndVersion(normalizeModelName(meta.family)).family : undefined;
  const family = reportedFamily ?? (fromName ? named.family : undefined);
  // The name's version counts where the name is of the same family the engine reports (llama3.1 is llama).
  const version = named.version && (!reportedFamily || reportedFamily === named.family) ? named.version : undefined;
  const parameters = meta?.parameters ?? (fromName ? sizeParameters(named.size) : undefined);
  const quant = quantOf(meta?.quantization) ?? (fromName ? quantOf(local) : undefined);
  return { ...(family ? { family } : {}), ...(version ? { version } : {}), ...(parameters ? { parameters } : {}), ...(quant ? { quant } : {}) };
}

/** Whether a catalogue model can be the local one: nothing the engine reports says otherwise. */
function consistent(e: Evidence, m: CatalogueModel): boolean {
  const info = modelInfo(normalizeModelName(m.id));
  if (e.family && info.family && e.family !== info.family) return false;
  const size = sizeParameters(info.size);
  if (e.parameters !== undefined && size !== undefined && !sameSize(e.parameters, size)) return false;
  // A catalogue entry too small to name a size, checked against a model the engine says is tiny (a test GGUF).
  if (e.parameters !== undefined && size === undefined && e.parameters < 1e8) return false;
  const q = quantOf(m.id);
  if (q && e.quant && q !== e.quant) return false;
  return true;
}

/** Catalogue models the engine's report fits: same family and parameter size (and version, quantization where said). */
function byMetadata(e: Evidence, catalogue: CatalogueModel[]): CatalogueModel[] {
  if (!e.family || e.parameters === undefined) return [];
  return catalogue.filter((m) => {
    const info = modelInfo(normalizeModelName(m.id));
    const size = sizeParameters(info.size);
    if (info.family !== e.family || size === undefined || !sameSize(e.parameters!, size)) return false;
    if (e.version && info.version && e.version !== info.version) return false;
    return consistent(e, m);
  });
}

export type MatchBasis = 'id' | 'name' | 'metadata';

/**
 * The catalogue id a local model is, the Go setup's way (internal/setup/discovery.go) with the engine's
 * word added: the exact id (any case); else a known alias, the slug, or the same name once normalised
 * ("qwen2.5:7b" is Qwen/Qwen2.5-7B-Instruct), unless what the engine reports contradicts it (a 0.1 M
 * parameter file named like Llama 8B is not Llama 8B); else the engine's metadata — family and parameter
 * size, version and quantization where known — fitting exactly one catalogue model. Never a likeness of
 * names alone.
 */
export function matchModel(
  local: string,
  catalogue: CatalogueModel[],
  meta?: EngineModelMeta,
): { id: string; confidence: number; basis: MatchBasis } | undefined {
  const lower = local.toLowerCase();
  const direct = catalogue.find((m) => m.id.toLowerCase() === lower);
  if (direct) return { id: direct.id, confidence: 1, basis: 'id' };
  const e = evidenceOf(local, meta);
  const n = normalizeModelName(local);
  const alias = ALIASES[n]?.toLowerCase();
  const named =
    (alias ? catalogue.find((m) => m.id.toLowerCase() === alias) : undefined) ??
    catalogue.find((m) => m.slug && normalizeModelName(m.slug) === n) ??
    catalogue.find((m) => normalizeModelName(m.id) === n);
  if (named && consistent(e, named)) return { id: named.id, confidence: 1, basis: 'name' };
  const fits = byMetadata(e, catalogue);
  if (fits.length === 1) return { id: fits[0]!.id, confidence: e.version ? 0.9 : 0.75, basis: 'metadata' };
  return undefined;
}

/** What the console shows for one announced model: known or not, the match, and the catalogue models the engine's report fits. */
export function matchView(
  announcedId: string,
  source: CatalogueMatchView['source'],
  localName: string | undefined,
  catalogue: CatalogueModel[],
  meta?: EngineModelMeta,
): CatalogueMatchView {
  if (catalogue.some((m) => m.id === announcedId)) return { known: true, source, suggestions: [] };
  const m = matchModel(localName ?? announcedId, catalogue, meta) ?? (localName ? matchModel(announcedId, catalogue, meta) : undefined);
  const fits = byMetadata(evidenceOf(localName ?? announcedId, meta), catalogue).map((c) => c.id);
  const suggestions = [...new Set([...(m ? [m.id] : []), ...fits])].slice(0, 3);
  return { known: false, source, ...(m ? { matchedId: m.id, confidence: Math.round(m.confidence * 100) / 100, basis: m.basis } : {}), suggestions };
}

export interface CatalogueOptions {
  serviceUrl: () => string;
  log: Logger;
  timeoutMs?: number;
  ttlMs?: number;
  fetchImpl?: typeof fetch;
}

/** Fetches and caches the catalogue; a failure keeps the last good list. */
export class Catalogue {
  private list: CatalogueModel[] = [];
  private fetchedAt?: number;
  private error?: string;
  private running?: Promise<void>;
  private lastUrl = '';
  /** Match views per (id, source, engine name) for the current list: the snapshot asks often. */
  private readonly memo = new Map<string, CatalogueMatchView>();

  constructor(private readonly o: CatalogueOptions) {}

  get models(): CatalogueModel[] {
    return this.list;
  }

  /** The ids of the last list read; undefined before one was read (nothing is known of what is routed). */
  ids(): string[] | undefined {
    return this.fetchedAt === undefined ? undefined : this.list.map((m) => m.id);
  }

  url(): string {
    return `${this.o.serviceUrl().replace(/\/+$/, '')}/api/v1/models?page_size=200`;
  }

  /** Refreshes when the cache is older than the TTL (or `force`), one fetch at a time. */
  refresh(force = false): Promise<void> {
    const fresh = this.fetchedAt !== undefined && Date.now() - this.fetchedAt < (this.o.ttlMs ?? 30 * 60_000) && this.lastUrl === this.url();
    if (fresh && !force) return Promise.resolve();
    this.running ??= this.fetchOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async fetchOnce(): Promise<void> {
    const url = this.url();
    const timeoutMs = this.o.timeoutMs ?? 10_000;
    try {
      const res = await (this.o.fetchImpl ?? fetch)(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      // Read in pieces up to the limit: a platform that streams for its whole deadline is cut off there.
      const text = await readCapped(res, MAX_CATALOGUE_BYTES);
      let json: unknown;
      try {
        json = parseJson(text, JSON_LIMITS.platform);
      } catch (e) {
        throw new Error(`the answer is not JSON we read (${(e as Error).message})`);
      }
      const { models, skipped } = parseCatalogue(json);
      this.list = models;
      this.memo.clear();
      this.fetchedAt = Date.now();
      this.lastUrl = url;
      this.error = undefined;
      this.o.log.info(
        `model catalogue: ${models.length} model(s) from ${url}${skipped ? ` (${skipped} malformed entr${skipped === 1 ? 'y' : 'ies'} skipped)` : ''}`,
      );
    } catch (e) {
      const err = e as Error;
      const reason = err.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : ((err as { cause?: Error }).cause?.message ?? err.message);
      this.error = `could not read the model catalogue at ${url}: ${reason}`;
      this.o.log.warn(`${this.error}${this.fetchedAt ? '; keeping the last list' : ''}`, { code: 'catalogue_unavailable' });
    }
  }

  /** The console's view for the announced models (`local` gives each one's engine name and whether models.json names it). */
  view(models: Array<{ id: string; explicit: boolean; localName?: string; meta?: EngineModelMeta }>): CatalogueView {
    const base = {
      url: this.url(),
      size: this.list.length,
      ...(this.fetchedAt ? { fetchedAt: this.fetchedAt } : {}),
      ...(this.error ? { error: this.error } : {}),
    };
    if (this.fetchedAt === undefined) return { ...base, state: this.error ? 'error' : 'idle', models: {} };
    const out: Record<string, CatalogueMatchView> = {};
    for (const m of models) {
      const source = m.explicit ? 'explicit' : 'engine';
      const key = `${m.id}\u0000${source}\u0000${m.localName ?? ''}\u0000${m.meta ? JSON.stringify(m.meta) : ''}`;
      let v = this.memo.get(key);
      if (!v) {
        if (this.memo.size > 2000) this.memo.clear();
        this.memo.set(key, (v = matchView(m.id, source, m.localName, this.list, m.meta)));
      }
      out[m.id] = v;
    }
    return { ...base, state: this.error ? 'error' : 'ok', models: out };
  }
}
