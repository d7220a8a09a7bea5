// The network's model catalogue: GET {ServiceURL}/api/v1/models?page_size=200 → {data: {list: [{id,
// slug, name, category, active}]}} (public; the Go provider's FetchSwanModels). The hub routes only
// the ids it lists: a model announced under another name gets no traffic. Local engine names are
// matched to catalogue ids the way the Go provider's setup does (internal/setup/discovery.go):
// a case-insensitive id match, then a few known aliases, then the slug, then a score over the
// normalised name's family / version / size (at least 0.5 to count). A models.json key is an explicit
// mapping and wins: it is not re-matched, only checked.
// The answer is validated, kept for 30 minutes, fetched with a 10 s timeout; a failed refresh keeps
// the last good list.
import { z } from 'zod';
import type { CatalogueMatchView, CatalogueView } from '../../shared/bridge';
import type { Logger } from '../log';
import { AnswerError } from './get-json';
import { JSON_LIMITS, parseJson } from '../http/bounded-json';

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
    models.push({ id: e.data.id, ...(e.data.slug ? { slug: e.data.slug } : {}), ...(e.data.name ? { name: e.data.name } : {}), ...(e.data.category ? { category: e.data.category } : {}) });
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
const SIZES = ['405b', '70b', '65b', '34b', '33b', '32b', '30b', '27b', '24b', '14b', '13b', '12b', '11b', '8b', '7b', '6b', '4b', '3b', '2b', '1b', '0-5b', '500m', 'mini', 'small', 'medium', 'large', 'xl', 'xxl'];

/** "meta-llama/Llama-3.2-3B-Instruct", "llama3.2:3b" → "llama-3-2-3b". */
export function normalizeModelName(name: string): string {
  let n = name.toLowerCase();
  for (const p of ORG_PREFIXES) if (n.startsWith(p)) n = n.slice(p.length);
  for (const s of SUFFIXES) if (n.endsWith(s)) n = n.slice(0, -s.length);
  n = n.replace(/[:_.]/g, '-').replace(/([a-z])(?=[0-9])/g, '$1-').replace(/-{2,}/g, '-');
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

/** 0..1: how well a normalised local name matches a normalised catalogue name. */
export function matchScore(local: string, remote: string): number {
  if (local === remote) return 1;
  const a = modelInfo(local);
  const b = modelInfo(remote);
  if (local.includes(remote) || remote.includes(local)) return a.family !== '' && a.family === b.family ? 0.85 : 0.6;
  if (!a.family || !b.family) return 0;
  const family = a.family === b.family ? 0.5 : a.family.includes(b.family) || b.family.includes(a.family) ? 0.3 : 0;
  if (family === 0) return 0;
  return family + (a.version && a.version === b.version ? 0.25 : 0) + (a.size && a.size === b.size ? 0.25 : 0);
}

/** The catalogue id a local engine name matches, or undefined (discovery.go's findBestMatch). */
export function matchModel(local: string, catalogue: CatalogueModel[]): { id: string; confidence: number } | undefined {
  const lower = local.toLowerCase();
  const direct = catalogue.find((m) => m.id.toLowerCase() === lower);
  if (direct) return { id: direct.id, confidence: 1 };
  const n = normalizeModelName(local);
  const alias = ALIASES[n]?.toLowerCase();
  const aliased = alias ? catalogue.find((m) => m.id.toLowerCase() === alias) : undefined;
  if (aliased) return { id: aliased.id, confidence: 1 };
  const bySlug = catalogue.find((m) => m.slug && normalizeModelName(m.slug) === n);
  if (bySlug) return { id: bySlug.id, confidence: 1 };
  let best: { id: string; confidence: number } | undefined;
  for (const m of catalogue) {
    const score = Math.max(matchScore(n, normalizeModelName(m.id)), m.slug ? matchScore(n, normalizeModelName(m.slug)) : 0);
    if (score >= 0.5 && score > (best?.confidence ?? 0)) best = { id: m.id, confidence: score };
  }
  return best;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) m.set(s.slice(i, i + 2), (m.get(s.slice(i, i + 2)) ?? 0) + 1);
  return m;
}

/** Dice similarity of two strings' letter pairs, 0..1 (a tie-breaker for suggestions). */
function similarity(a: string, b: string): number {
  const x = bigrams(a);
  const y = bigrams(b);
  let common = 0;
  for (const [k, c] of x) common += Math.min(c, y.get(k) ?? 0);
  const total = Math.max(1, a.length - 1) + Math.max(1, b.length - 1);
  return (2 * common) / total;
}

/** The `n` catalogue ids closest to a name, best first. */
export function closestIds(name: string, catalogue: CatalogueModel[], n = 3): string[] {
  const local = normalizeModelName(name);
  return catalogue
    .map((m) => {
      const remote = normalizeModelName(m.id);
      return { id: m.id, score: Math.max(matchScore(local, remote), m.slug ? matchScore(local, normalizeModelName(m.slug)) : 0) + similarity(local, remote) / 2 };
    })
    .filter((x) => x.score > 0.2)
    .sort((p, q) => q.score - p.score || p.id.localeCompare(q.id))
    .slice(0, n)
    .map((x) => x.id);
}

/** What the console shows for one announced model. */
export function matchView(announcedId: string, source: CatalogueMatchView['source'], localName: string | undefined, catalogue: CatalogueModel[]): CatalogueMatchView {
  if (catalogue.some((m) => m.id === announcedId)) return { known: true, source, suggestions: [] };
  const m = matchModel(localName ?? announcedId, catalogue) ?? (localName ? matchModel(announcedId, catalogue) : undefined);
  const suggestions = [...new Set([...(m ? [m.id] : []), ...closestIds(localName ?? announcedId, catalogue)])].slice(0, 3);
  return { known: false, source, ...(m ? { matchedId: m.id, confidence: Math.round(m.confidence * 100) / 100 } : {}), suggestions };
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
      const res = await (this.o.fetchImpl ?? fetch)(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      const text = await res.text();
      if (text.length > 8 * 1024 * 1024) throw new Error('the answer is over 8 MB');
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
      this.o.log.info(`model catalogue: ${models.length} model(s) from ${url}${skipped ? ` (${skipped} malformed entr${skipped === 1 ? 'y' : 'ies'} skipped)` : ''}`);
    } catch (e) {
      const err = e as Error;
      const reason = err.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : ((err as { cause?: Error }).cause?.message ?? err.message);
      this.error = `could not read the model catalogue at ${url}: ${reason}`;
      this.o.log.warn(`${this.error}${this.fetchedAt ? '; keeping the last list' : ''}`, { code: 'catalogue_unavailable' });
    }
  }

  /** The console's view for the announced models (`local` gives each one's engine name and whether models.json names it). */
  view(models: Array<{ id: string; explicit: boolean; localName?: string }>): CatalogueView {
    const base = { url: this.url(), size: this.list.length, ...(this.fetchedAt ? { fetchedAt: this.fetchedAt } : {}), ...(this.error ? { error: this.error } : {}) };
    if (this.fetchedAt === undefined) return { ...base, state: this.error ? 'error' : 'idle', models: {} };
    const out: Record<string, CatalogueMatchView> = {};
    for (const m of models) {
      const source = m.explicit ? 'explicit' : 'engine';
      const key = `${m.id}\u0000${source}\u0000${m.localName ?? ''}`;
      let v = this.memo.get(key);
      if (!v) {
        if (this.memo.size > 2000) this.memo.clear();
        this.memo.set(key, (v = matchView(m.id, source, m.localName, this.list)));
      }
      out[m.id] = v;
    }
    return { ...base, state: this.error ? 'error' : 'ok', models: out };
  }
}
