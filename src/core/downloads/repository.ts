// The Swan model repository as the Go provider reads it (internal/models/download.go):
//   GET {ServiceURL}/api/v1/models/catalog → {data: {models: [{model_id, name, category, file_count,
//       total_size_bytes, weight_source_url?}], total}}
//   GET {ServiceURL}/api/v1/models/{id}/files → {data: {model_id, files: [{filename, hash, algorithm,
//       size_bytes, url}], total_size_bytes, file_count}}
// Both wrapped in {data: …}; the id is one path segment (PathEscape: "org/name" → "org%2Fname"). Answers are
// read bounded (platform/get-json) and validated: a catalogue entry that is not well formed is skipped and
// counted; a file list with one bad file is refused whole (a model with a file missing would not load).
import path from 'node:path';
import { z } from 'zod';
import { apiBase, getJson } from '../platform/get-json';
import { CodedError } from '../../shared/bridge-error';
import { formatIssues } from '../../shared/zod-issues';

export interface RepositoryModel {
  modelId: string;
  name: string;
  category: string;
  fileCount: number;
  totalSizeBytes: number;
  weightSourceUrl?: string;
}

export interface RepositoryFile {
  filename: string;
  /** sha256 hex, lower case; '' when the repository gives none (the file is then only hashed here). */
  hash: string;
  sizeBytes: number;
  url: string;
}

export interface RepositoryFiles {
  modelId: string;
  files: RepositoryFile[];
  totalSizeBytes: number;
}

/** Why the repository's answer could not be used. */
export type RepositoryErrorCode = 'repository_unreachable' | 'repository_malformed' | 'model_not_in_repository' | 'unsafe_filename' | 'unsupported_algorithm';

export class RepositoryError extends CodedError<RepositoryErrorCode> {
  override name = 'RepositoryError';
}

const size = z
  .number()
  .int()
  .min(0)
  .max(2 ** 53 - 1);
const catalogEntry = z
  .object({
    model_id: z.string().min(1).max(256),
    name: z.string().max(256).optional().catch(undefined),
    category: z.string().max(64).optional().catch(undefined),
    file_count: z.number().int().min(0).max(1_000_000).optional().catch(undefined),
    total_size_bytes: size.optional().catch(undefined),
    weight_source_url: z.string().max(2048).optional().catch(undefined),
  })
  .passthrough();
const catalogAnswer = z.object({ data: z.object({ models: z.array(z.unknown()).max(20_000), total: z.number().optional() }).passthrough() }).passthrough();

const fileEntry = z
  .object({
    filename: z.string().min(1).max(1024),
    hash: z.string().max(200).optional().default(''),
    algorithm: z.string().max(32).optional().default('sha256'),
    size_bytes: size,
    url: z.string().min(1).max(4096),
  })
  .passthrough();
const filesAnswer = z
  .object({
    data: z.object({ model_id: z.string().max(256).optional(), files: z.array(fileEntry).max(100_000), total_size_bytes: size.optional() }).passthrough(),
  })
  .passthrough();

export function parseCatalog(json: unknown): { models: RepositoryModel[]; skipped: number } {
  const a = catalogAnswer.safeParse(json);
  if (!a.success) throw new RepositoryError('repository_malformed', "the model repository's catalogue is not shaped {data: {models: [...]}}");
  const models: RepositoryModel[] = [];
  let skipped = 0;
  for (const raw of a.data.data.models) {
    const e = catalogEntry.safeParse(raw);
    if (!e.success) {
      skipped++;
      continue;
    }
    const m = e.data;
    models.push({
      modelId: m.model_id,
      name: m.name ?? m.model_id,
      category: m.category ?? '',
      fileCount: m.file_count ?? 0,
      totalSizeBytes: m.total_size_bytes ?? 0,
      ...(m.weight_source_url ? { weightSourceUrl: m.weight_source_url } : {}),
    });
  }
  return { models, skipped };
}

/** A repository filename as a path under the model's folder, or undefined when it would leave it. */
export function safeRelativePath(filename: string): string | undefined {
  if (filename.includes('\0') || filename.includes('\\') || path.posix.isAbsolute(filename) || path.win32.isAbsolute(filename)) return undefined;
  const norm = path.posix.normalize(filename);
  if (norm === '.' || norm.startsWith('../') || norm === '..' || norm.split('/').some((p) => p === '..' || p === '')) return undefined;
  return norm;
}

/** Checks a file list: sha256 only, every filename inside the model's folder, every URL http(s) (a relative one is resolved on the ServiceURL). */
export function parseModelFiles(json: unknown, modelId: string, serviceUrl: string): RepositoryFiles {
  const a = filesAnswer.safeParse(json);
  if (!a.success)
    throw new RepositoryError('repository_malformed', `the model repository's file list of ${modelId} is malformed (${formatIssues(a.error, { limit: 1 })})`);
  const files: RepositoryFile[] = [];
  for (const f of a.data.data.files) {
    const rel = safeRelativePath(f.filename);
    if (!rel)
      throw new RepositoryError(
        'unsafe_filename',
        `the model repository lists a file "${f.filename.slice(0, 80)}" that would be written outside the model's folder; nothing was downloaded`,
        'filename',
      );
    const algorithm = f.algorithm.toLowerCase();
    if (algorithm !== 'sha256')
      throw new RepositoryError('unsupported_algorithm', `the model repository hashes ${rel} with ${algorithm}; only sha256 is checked`, 'algorithm');
    const hash = f.hash
      .trim()
      .toLowerCase()
      .replace(/^sha256:/, '');
    if (hash !== '' && !/^[0-9a-f]{64}$/.test(hash))
      throw new RepositoryError('repository_malformed', `the model repository's hash of ${rel} is not a sha256`, 'hash');
    let url: URL;
    try {
      url = new URL(f.url, `${serviceUrl.replace(/\/+$/, '')}/`);
    } catch {
      throw new RepositoryError('repository_malformed', `the model repository's address of ${rel} is not a URL`, 'url');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new RepositoryError('repository_malformed', `the model repository's address of ${rel} is not http(s)`, 'url');
    files.push({ filename: rel, hash, sizeBytes: f.size_bytes, url: url.href });
  }
  if (files.length === 0) throw new RepositoryError('model_not_in_repository', `the model repository lists no files for ${modelId}`);
  const total = files.reduce((s, f) => s + f.sizeBytes, 0);
  return { modelId, files, totalSizeBytes: total };
}

/** The repository's URLs of a ServiceURL. */
export function repositoryUrls(serviceUrl: string): { catalog: string; files: (modelId: string) => string } {
  const base = apiBase(serviceUrl);
  // Go's url.PathEscape: one path segment, "/" escaped.
  return { catalog: `${base}/models/catalog`, files: (id) => `${base}/models/${encodeURIComponent(id)}/files` };
}

export async function fetchCatalog(serviceUrl: string): Promise<{ models: RepositoryModel[]; skipped: number }> {
  const url = repositoryUrls(serviceUrl).catalog;
  const r = await getJson(url, { timeoutMs: 30_000, maxBytes: 8 * 1024 * 1024 });
  if (!r.ok) throw new RepositoryError('repository_unreachable', `could not read the model repository's catalogue: ${r.error}`);
  return parseCatalog(r.json);
}

export async function fetchModelFiles(serviceUrl: string, modelId: string): Promise<RepositoryFiles> {
  const url = repositoryUrls(serviceUrl).files(modelId);
  const r = await getJson(url, { timeoutMs: 30_000, maxBytes: 8 * 1024 * 1024 });
  if (!r.ok && r.status === 404)
    throw new RepositoryError(
      'model_not_in_repository',
      `the model repository has no files for ${modelId} (run "swan-provider models catalog" for the ids it has)`,
    );
  if (!r.ok) throw new RepositoryError('repository_unreachable', `could not read the model repository's file list of ${modelId}: ${r.error}`);
  return parseModelFiles(r.json, modelId, serviceUrl);
}
