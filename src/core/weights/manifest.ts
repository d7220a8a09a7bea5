// The weight manifest in the Go node's shape (internal/models/download.go, HashManifest): per-file sha256
// and a composite over them, SHA-256 of the lines "filename:hash\n" in filename order. A Go node writes one
// as ~/.swan/models/<model_id>/.swan-hash-manifest.json when it downloads a model; this node reads those,
// and writes its own, in the same shape, for the files an engine serves from (src/core/weights/weights.ts).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../config/atomic-file';
import { parseJson } from '../http/bounded-json';

export const MANIFEST_FILENAME = '.swan-hash-manifest.json';
/** A manifest file larger than this is not one (a Go manifest lists a model's files: a few KB). */
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;
/** A manifest nests three deep ({files: [{…}]}); its keys are a few per file. */
const MANIFEST_LIMITS = { maxBytes: MAX_MANIFEST_BYTES, maxDepth: 8, maxKeys: 500_000 };

export interface ManifestFile {
  filename: string;
  hash: string;
  size_bytes: number;
}

export interface HashManifest {
  model_id: string;
  composite_hash: string;
  algorithm: string;
  files: ManifestFile[];
  created_at: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

const manifestSchema = z
  .object({
    model_id: z.string().max(512).optional(),
    composite_hash: z.string().max(200),
    algorithm: z.string().max(32).optional(),
    files: z
      .array(z.object({ filename: z.string().min(1).max(4096), hash: z.string().max(200), size_bytes: z.number().int().min(0).optional() }).passthrough())
      .max(100_000)
      .optional(),
    created_at: z.string().max(64).optional(),
  })
  .passthrough();

/** Go's ComputeCompositeHash: "" for no files; else sha256 over "filename:hash\n" sorted by filename (byte order, as Go's `<`). */
export function compositeHash(files: ReadonlyArray<Pick<ManifestFile, 'filename' | 'hash'>>): string {
  if (files.length === 0) return '';
  const sorted = [...files].sort((a, b) => Buffer.compare(Buffer.from(a.filename), Buffer.from(b.filename)));
  const h = createHash('sha256');
  for (const f of sorted) h.update(`${f.filename}:${f.hash}\n`);
  return h.digest('hex');
}

/** A hash as the hub may write it ("sha256:ABC…" or upper case) in the form manifests hold. */
export function normalizeHash(h: string): string {
  return h
    .trim()
    .toLowerCase()
    .replace(/^sha256:/, '');
}

export function isSha256(h: string): boolean {
  return SHA256_HEX.test(h);
}

export type ManifestRead = { ok: true; manifest: HashManifest } | { ok: false; absent: true } | { ok: false; absent: false; error: string };

/**
 * The Go node's manifest of a model, when there is one: `<goModelsDir>/<model_id>/.swan-hash-manifest.json`
 * (a model id is an "org/name" path there, as Go joins it). Anything odd is an error, never a guess.
 */
export function readGoManifest(goModelsDir: string, modelId: string): ManifestRead {
  const dir = goModelDir(goModelsDir, modelId);
  if (!dir) return { ok: false, absent: true };
  return readManifestFile(path.join(dir, MANIFEST_FILENAME), modelId);
}

/** `<goModelsDir>/<model_id>`, or undefined when the id would leave that folder (`..`, an absolute path). */
export function goModelDir(goModelsDir: string, modelId: string): string | undefined {
  if (modelId.includes('\0') || path.isAbsolute(modelId) || path.win32.isAbsolute(modelId)) return undefined;
  const root = path.resolve(goModelsDir);
  const dir = path.resolve(root, modelId);
  const rel = path.relative(root, dir);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? undefined : dir;
}

export function readManifestFile(file: string, modelId: string): ManifestRead {
  let text: string;
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return { ok: false, absent: false, error: `${file} is not a file` };
    if (st.size > MAX_MANIFEST_BYTES) return { ok: false, absent: false, error: `${file} is ${st.size} bytes, more than a manifest can be` };
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, absent: true };
    return { ok: false, absent: false, error: `cannot read ${file}: ${(e as Error).message}` };
  }
  let raw: unknown;
  try {
    raw = parseJson(text, MANIFEST_LIMITS);
  } catch (e) {
    return { ok: false, absent: false, error: `${file} is not a JSON manifest (${(e as Error).message})` };
  }
  const r = manifestSchema.safeParse(raw);
  if (!r.success)
    return {
      ok: false,
      absent: false,
      error: `${file} is not a hash manifest (${r.error.issues[0]?.path.join('.') || 'payload'}: ${r.error.issues[0]?.message})`,
    };
  const m = r.data;
  const algorithm = (m.algorithm ?? 'sha256').toLowerCase();
  if (algorithm !== 'sha256') return { ok: false, absent: false, error: `${file} uses ${algorithm}; only sha256 manifests are read` };
  const files = (m.files ?? []).map((f) => ({ filename: f.filename, hash: normalizeHash(f.hash), size_bytes: f.size_bytes ?? 0 }));
  const composite = normalizeHash(m.composite_hash);
  if (composite === '' && files.length === 0) return { ok: false, absent: false, error: `${file} lists no files and no composite hash` };
  return { ok: true, manifest: { model_id: m.model_id ?? modelId, composite_hash: composite, algorithm, files, created_at: m.created_at ?? '' } };
}

/** Builds a manifest of hashed files (composite from them). */
export function makeManifest(modelId: string, files: ManifestFile[], createdAt = new Date()): HashManifest {
  return { model_id: modelId, composite_hash: compositeHash(files), algorithm: 'sha256', files, created_at: createdAt.toISOString().replace(/\.\d{3}Z$/, 'Z') };
}

/** Where this node keeps the manifest it computed for a model: `<dir>/<model id, encoded>.json`. */
export function ownManifestPath(dir: string, modelId: string): string {
  return path.join(dir, `${encodeURIComponent(modelId).replace(/^\.+/, (d) => '%2E'.repeat(d.length))}.json`);
}

export function writeManifest(file: string, manifest: HashManifest & Record<string, unknown>): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeJsonAtomic(file, manifest, 2);
}
