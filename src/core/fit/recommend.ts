// What this GPU should serve (`swan-provider models recommend`, the console's "get a model"): the Swan model
// repository's catalogue joined with the network's demand (every field: market.ts), this machine's GPUs,
// what is already in the models folder, and our own estimate of each model's memory need (estimate.ts). The
// figures come from the model's files: a GGUF's header (read by byte ranges, never the whole file, when it is
// not on disk yet), else config.json and a safetensors index. Sorted by what a model would earn here: the ones
// that fit first, then the unknown ones (each with why), then those too large. Go: recommend-models
// (internal/market/demand.go), with a fit of our own where the network's min_vram_gb is not known.
import fs from 'node:fs';
import path from 'node:path';
import { goModelDir, readGoManifest } from '../weights/manifest';
import { apiBase, getJson } from '../platform/get-json';
import { fetchCatalog, fetchModelFiles, type RepositoryFile, type RepositoryModel } from '../downloads/repository';
import { DEFAULT_CONTEXT, estimateVram, fitOf, type Fit, type KvShape, type Plan, type VramEstimate, type WeightsFigure } from './estimate';
import { readGgufFacts, remoteGgufFacts } from './gguf-facts';
import { earnHere, fetchDemand, type DemandEntry } from './market';
import { shapeFromConfig, weightsFromConfig, weightsFromSafetensorsIndex } from './published';

export type OnDisk = 'verified' | 'hashed' | 'partial' | 'none';

export interface Recommendation {
  modelId: string;
  name: string;
  category: string;
  /** The repository's size of the model's files (what a download fetches); 0 when it is not in the repository. */
  sizeBytes: number;
  inRepository: boolean;
  onDisk: OnDisk;
  fit: Fit;
  estimate: VramEstimate;
  plan: Plan;
  /** USD a day this node would earn serving it (market.earnHere); 0 when it does not fit; undefined: no figure. */
  earnHereDaily?: number;
  demand?: DemandEntry;
}

export interface ModelFacts {
  weights?: WeightsFigure;
  shape?: KvShape;
  /** Why the facts are missing or partial. */
  note?: string;
}

export interface RecommendOptions {
  serviceUrl: string;
  modelsDir: string;
  /** GPU memory to plan for (bytes); undefined: no GPU reported it (every fit is then unknown). */
  budgetBytes: number | undefined;
  /** Sequences served at once (default 1). */
  slots?: number;
  /** Tokens per slot; default: from the network's context_length and prompt sizes (planContext). */
  contextLength?: number;
  /** How many models' files are read for an estimate (the best earners first). */
  maxInspected?: number;
}

const CONCURRENCY = 4;

/** The context planned for a model: what the caller chose, else the network's context_length, else room for its largest prompts. */
export function planContext(d: DemandEntry | undefined, chosen?: number): number {
  if (chosen) return chosen;
  if (d?.contextLength) return d.contextLength;
  const prompts = d?.totalTokensP95 ?? d?.promptTokensMax ?? d?.promptTokensP95;
  if (prompts) return Math.max(DEFAULT_CONTEXT, Math.ceil((prompts * 1.25) / 1024) * 1024);
  return DEFAULT_CONTEXT;
}

/** How much of the model is in the models folder: a manifest that read (verified/hashed by what the download said), files without one (partial), nothing. */
export function onDiskState(modelsDir: string, modelId: string): OnDisk {
  const dir = goModelDir(modelsDir, modelId);
  if (!dir || !fs.existsSync(dir)) return 'none';
  const m = readGoManifest(modelsDir, modelId);
  if (m.ok) return m.manifest.files.every((f) => f.hash) ? 'verified' : 'hashed';
  return fs.readdirSync(dir).some((f) => !f.startsWith('.')) ? 'partial' : 'none';
}

/** The facts of a model from its files in the models folder: the largest GGUF's header, else config.json (+ a safetensors index). */
export async function localFacts(dir: string): Promise<ModelFacts> {
  const files = fs.readdirSync(dir, { recursive: true, withFileTypes: false }) as string[];
  const ggufs = files.filter((f) => f.toLowerCase().endsWith('.gguf')).map((f) => ({ f, size: fs.statSync(path.join(dir, f)).size }));
  if (ggufs.length) {
    const biggest = ggufs.sort((a, b) => b.size - a.size)[0]!;
    const g = await readGgufFacts(path.join(dir, biggest.f));
    return { weights: g.weights, ...(g.shape ? { shape: g.shape } : {}) };
  }
  const read = (name: string): unknown => {
    try {
      return JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as unknown;
    } catch {
      return undefined;
    }
  };
  return publishedFacts(read('config.json'), read('model.safetensors.index.json'));
}

function publishedFacts(config: unknown, index: unknown): ModelFacts {
  const weights = (index !== undefined ? weightsFromSafetensorsIndex(index) : undefined) ?? (config !== undefined ? weightsFromConfig(config) : undefined);
  const shape = config !== undefined ? shapeFromConfig(config) : undefined;
  return { ...(weights ? { weights } : {}), ...(shape ? { shape } : {}), ...(config === undefined ? { note: 'no config.json among its files' } : {}) };
}

/** The facts of a model from the repository's file list, without downloading it: a GGUF's header by byte ranges, else config.json and the safetensors index. */
export async function repositoryFacts(files: RepositoryFile[]): Promise<ModelFacts> {
  const ggufs = files.filter((f) => f.filename.toLowerCase().endsWith('.gguf')).sort((a, b) => b.sizeBytes - a.sizeBytes);
  if (ggufs.length) {
    const g = await remoteGgufFacts(ggufs[0]!.url, ggufs[0]!.sizeBytes);
    return { weights: g.weights, ...(g.shape ? { shape: g.shape } : {}) };
  }
  const fetchSmall = async (name: string): Promise<unknown> => {
    const f = files.find((x) => x.filename === name);
    if (!f || f.sizeBytes > 4 * 1024 * 1024) return undefined;
    const r = await getJson(f.url, { timeoutMs: 15_000 });
    return r.ok ? r.json : undefined;
  };
  return publishedFacts(await fetchSmall('config.json'), await fetchSmall('model.safetensors.index.json'));
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!);
    }),
  );
  return out;
}

const FIT_ORDER: Record<Fit['fit'], number> = { fits: 0, unknown: 1, too_large: 2 };

/** The rows in the order an owner reads them: fits, then unknown, then too large; inside each, what it earns here. */
export function sortRecommendations(rows: Recommendation[]): Recommendation[] {
  return [...rows].sort(
    (a, b) => FIT_ORDER[a.fit.fit] - FIT_ORDER[b.fit.fit] || (b.earnHereDaily ?? -1) - (a.earnHereDaily ?? -1) || a.modelId.localeCompare(b.modelId),
  );
}

/** One row from what is known of a model. */
export function recommendation(
  m: { modelId: string; name?: string; category?: string; sizeBytes?: number; inRepository: boolean },
  d: DemandEntry | undefined,
  facts: ModelFacts,
  onDisk: OnDisk,
  o: Pick<RecommendOptions, 'budgetBytes' | 'slots' | 'contextLength'>,
): Recommendation {
  const plan: Plan = { contextLength: planContext(d, o.contextLength), slots: o.slots ?? 1 };
  let estimate = estimateVram(facts.weights, facts.shape, plan);
  if (!estimate.known && facts.note) estimate = { ...estimate, reason: `${estimate.reason} (${facts.note})` };
  const fit = fitOf(estimate, o.budgetBytes, d ? { minVramGb: d.minVramGb ?? 0, vramKnown: d.vramKnown } : undefined);
  const earn = earnHere(d);
  return {
    modelId: m.modelId,
    name: m.name ?? d?.modelName ?? m.modelId,
    category: m.category ?? d?.category ?? '',
    sizeBytes: m.sizeBytes ?? 0,
    inRepository: m.inRepository,
    onDisk,
    fit,
    estimate,
    plan: estimate.known ? { ...plan, contextLength: estimate.contextLength } : plan,
    ...(earn !== undefined ? { earnHereDaily: fit.fit === 'too_large' ? 0 : earn } : {}),
    ...(d ? { demand: d } : {}),
  };
}

/** The whole recommendation: the catalogue and the demand read, each model's facts found, the rows sorted. */
export async function recommend(o: RecommendOptions): Promise<{ rows: Recommendation[]; notes: string[] }> {
  const notes: string[] = [];
  const [catalog, demand] = await Promise.all([
    fetchCatalog(o.serviceUrl).catch((e: Error) => {
      notes.push(e.message);
      return { models: [] as RepositoryModel[], skipped: 0 };
    }),
    fetchDemand(o.serviceUrl).catch((e: Error) => {
      notes.push(e.message);
      return { entries: [] as DemandEntry[], skipped: 0 };
    }),
  ]);
  if (catalog.skipped) notes.push(`${catalog.skipped} malformed catalogue entr${catalog.skipped === 1 ? 'y' : 'ies'} skipped`);
  if (demand.skipped) notes.push(`${demand.skipped} malformed demand entr${demand.skipped === 1 ? 'y' : 'ies'} skipped`);
  if (o.budgetBytes === undefined) notes.push('no GPU here reported its memory: every fit is unknown (give --vram-gb to plan for a GPU)');
  const byId = new Map(demand.entries.map((d) => [d.modelId, d]));
  const models = [
    ...catalog.models.map((m) => ({ modelId: m.modelId, name: m.name, category: m.category, sizeBytes: m.totalSizeBytes, inRepository: true })),
    ...demand.entries.filter((d) => !catalog.models.some((m) => m.modelId === d.modelId)).map((d) => ({ modelId: d.modelId, inRepository: false })),
  ];
  // The best earners are inspected first; the rest keep an unknown estimate with that reason.
  models.sort((a, b) => (earnHere(byId.get(b.modelId)) ?? -1) - (earnHere(byId.get(a.modelId)) ?? -1));
  const limit = o.maxInspected ?? 50;
  const rows = await mapLimited(models, CONCURRENCY, async (m): Promise<Recommendation> => {
    const onDisk = onDiskState(o.modelsDir, m.modelId);
    let facts: ModelFacts = {};
    try {
      const dir = goModelDir(o.modelsDir, m.modelId);
      if (onDisk !== 'none' && dir) facts = await localFacts(dir);
      if (!facts.weights && m.inRepository && models.indexOf(m) < limit) facts = await repositoryFacts((await fetchModelFiles(o.serviceUrl, m.modelId)).files);
      else if (!facts.weights && !m.inRepository) facts = { note: 'not in the Swan model repository: nothing to read its size from' };
      else if (!facts.weights) facts = { note: `not inspected (only the ${limit} best earners are)` };
    } catch (e) {
      facts = { note: `its files could not be read: ${(e as Error).message.slice(0, 200)}` };
    }
    return recommendation(m, byId.get(m.modelId), facts, onDisk, o);
  });
  return { rows: sortRecommendations(rows), notes };
}

/** The demand URL, for messages. */
export function demandUrl(serviceUrl: string): string {
  return `${apiBase(serviceUrl)}/stats/model-demand`;
}
