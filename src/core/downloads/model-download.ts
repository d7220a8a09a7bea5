// A model from the Swan model repository into `<models folder>/<model_id>/`, as the Go provider lays it out
// (DownloadModelAndSaveManifest), so the fingerprint challenge finds it: the file list read first; the disk
// checked for the bytes still to come (check-disk-space) before any is fetched; each file fetched and
// verified in one pass (download.ts); `.swan-hash-manifest.json` written last, and only when every file
// matched. A file already complete is hashed once and kept when it matches. One download per model folder
// at a time, across processes (a lock file naming its pid).
import fs from 'node:fs';
import path from 'node:path';
import checkDiskSpace from 'check-disk-space';
import { goModelDir, makeManifest, MANIFEST_FILENAME, writeManifest, type HashManifest, type ManifestFile } from '../weights/manifest';
import { DownloadError, fetchFile } from './download';
import { fetchModelFiles, RepositoryError, type RepositoryFile, type RepositoryFiles } from './repository';
import { createHash } from 'node:crypto';
import { processAlive } from '../base/process-alive';
import type { ModelDownloadView } from '../../shared/views/managed';

export const LOCK_FILENAME = '.swan-download.lock';
/** Room kept free beside the files (logs, the ledger, the OS): 1 GiB or 2 %, the larger. */
const DISK_MARGIN = (total: number): number => Math.max(1024 ** 3, total * 0.02);

/** How far a download is (the console's ModelDownloadView carries the same figures, with the outcome). */
export type ModelProgress = Pick<
  ModelDownloadView,
  'modelId' | 'file' | 'fileIndex' | 'fileCount' | 'doneBytes' | 'totalBytes' | 'rateBytesPerSec' | 'etaSeconds'
> & {
  phase: 'listing' | 'checking' | 'downloading' | 'verified';
};

export interface ModelDownloadOptions {
  serviceUrl: string;
  modelsDir: string;
  modelId: string;
  signal?: AbortSignal;
  onProgress?: (p: ModelProgress) => void;
  /** Free bytes at a path (default check-disk-space); tests give their own. */
  freeBytes?: (dir: string) => Promise<number>;
  retries?: number;
  retryDelayMs?: number;
  /** The files, already listed by another source (the Hugging Face Hub); default: the Swan repository's list. */
  files?: RepositoryFiles;
}

export interface ModelDownloadResult {
  modelId: string;
  dir: string;
  manifest: HashManifest;
  files: Array<ManifestFile & { verified: boolean; resumedBytes: number; skipped: boolean }>;
  /** 'verified': every file matched the repository's sha256; 'hashed': some had no hash to check (hashed here only). */
  state: 'verified' | 'hashed';
  seconds: number;
}

/** Bytes per second over a sliding window of a few seconds. */
export class RateMeter {
  private readonly samples: Array<[number, number]> = [];
  constructor(private readonly windowMs = 5000) {}
  add(t: number, totalBytes: number): void {
    this.samples.push([t, totalBytes]);
    while (this.samples.length > 2 && t - this.samples[0]![0] > this.windowMs) this.samples.shift();
  }
  rate(): number {
    if (this.samples.length < 2) return 0;
    const [t0, b0] = this.samples[0]!;
    const [t1, b1] = this.samples[this.samples.length - 1]!;
    return t1 > t0 ? ((b1 - b0) * 1000) / (t1 - t0) : 0;
  }
}

async function defaultFreeBytes(dir: string): Promise<number> {
  // check-disk-space wants a path that exists: the nearest existing ancestor.
  let p = path.resolve(dir);
  while (!fs.existsSync(p) && path.dirname(p) !== p) p = path.dirname(p);
  return (await checkDiskSpace(p)).free;
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Takes the folder's lock (O_EXCL); a lock left by a process that is gone is taken over. */
function lock(dir: string, modelId: string): () => void {
  const file = path.join(dir, LOCK_FILENAME);
  for (let i = 0; i < 2; i++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number(fs.readFileSync(file, 'utf8').trim());
      if (pid > 0 && pid !== process.pid && processAlive(pid))
        throw new DownloadError('busy', `${modelId} is being downloaded by another process (pid ${pid}); wait for it or stop it`);
      fs.rmSync(file, { force: true });
    }
  }
  throw new DownloadError('busy', `could not take the download lock of ${modelId}`);
}

/** A complete file already there: hashed once, kept when it matches the repository's hash. */
async function alreadyThere(dest: string, f: RepositoryFile): Promise<string | undefined> {
  if (sizeOf(dest) !== f.sizeBytes || !fs.existsSync(dest)) return undefined;
  const h = createHash('sha256');
  for await (const chunk of fs.createReadStream(dest, { highWaterMark: 4 << 20 })) h.update(chunk as Buffer);
  const sha = h.digest('hex');
  return f.hash === '' || sha === f.hash ? sha : undefined;
}

export async function downloadModel(o: ModelDownloadOptions): Promise<ModelDownloadResult> {
  const t0 = performance.now();
  const dir = goModelDir(o.modelsDir, o.modelId);
  if (!dir) throw new RepositoryError('unsafe_filename', `"${o.modelId.slice(0, 80)}" is not a model id that can be a folder under ${o.modelsDir}`, 'modelId');
  const progress = (p: Omit<ModelProgress, 'modelId'>): void => o.onProgress?.({ modelId: o.modelId, ...p });
  progress({ phase: 'listing', fileIndex: 0, fileCount: 0, doneBytes: 0, totalBytes: 0, rateBytesPerSec: 0, etaSeconds: null });
  const list = o.files ?? (await fetchModelFiles(o.serviceUrl, o.modelId));
  const total = list.totalSizeBytes;
  fs.mkdirSync(dir, { recursive: true });
  const unlock = lock(dir, o.modelId);
  try {
    // A manifest from an earlier download no longer speaks for files about to change.
    fs.rmSync(path.join(dir, MANIFEST_FILENAME), { force: true });
    progress({ phase: 'checking', fileIndex: 0, fileCount: list.files.length, doneBytes: 0, totalBytes: total, rateBytesPerSec: 0, etaSeconds: null });
    const present = list.files.map((f) => {
      const dest = path.join(dir, f.filename);
      return Math.min(f.sizeBytes, sizeOf(dest) === f.sizeBytes ? f.sizeBytes : sizeOf(`${dest}.part`));
    });
    const toCome = total - present.reduce((a, b) => a + b, 0);
    const free = await (o.freeBytes ?? defaultFreeBytes)(dir);
    const margin = DISK_MARGIN(total);
    if (toCome + margin > free) {
      throw new DownloadError(
        'no_disk_space',
        `${o.modelId} needs ${gb(toCome)} more on the disk of ${dir} (and ${gb(margin)} kept free), but only ${gb(free)} is free. Free some space or choose another models folder (--models-dir).`,
      );
    }
    const meter = new RateMeter();
    let before = 0;
    const out: ModelDownloadResult['files'] = [];
    for (const [i, f] of list.files.entries()) {
      const dest = path.join(dir, f.filename);
      fs.mkdirSync(path.dirname(dest), { recursive: true });
      const kept = await alreadyThere(dest, f);
      if (kept) {
        out.push({ filename: f.filename, hash: kept, size_bytes: f.sizeBytes, verified: f.hash !== '', resumedBytes: f.sizeBytes, skipped: true });
        before += f.sizeBytes;
        continue;
      }
      const got = await fetchFile({
        url: f.url,
        dest,
        sha256: f.hash,
        size: f.sizeBytes,
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.retries !== undefined ? { retries: o.retries } : {}),
        ...(o.retryDelayMs !== undefined ? { retryDelayMs: o.retryDelayMs } : {}),
        onProgress: (p) => {
          const done = before + p.doneBytes;
          meter.add(Date.now(), done);
          const rate = meter.rate();
          progress({
            phase: 'downloading',
            file: f.filename,
            fileIndex: i,
            fileCount: list.files.length,
            doneBytes: done,
            totalBytes: total,
            rateBytesPerSec: Math.round(rate),
            etaSeconds: rate > 0 ? Math.ceil((total - done) / rate) : null,
          });
        },
      });
      before += f.sizeBytes;
      out.push({ filename: f.filename, hash: got.sha256, size_bytes: got.size, verified: got.verified, resumedBytes: got.resumedBytes, skipped: false });
    }
    const manifest = makeManifest(
      o.modelId,
      out.map((f) => ({ filename: f.filename, hash: f.hash, size_bytes: f.size_bytes })),
    );
    writeManifest(path.join(dir, MANIFEST_FILENAME), { ...manifest });
    progress({
      phase: 'verified',
      fileIndex: list.files.length,
      fileCount: list.files.length,
      doneBytes: total,
      totalBytes: total,
      rateBytesPerSec: Math.round(meter.rate()),
      etaSeconds: 0,
    });
    return {
      modelId: o.modelId,
      dir,
      manifest,
      files: out,
      state: out.every((f) => f.verified) ? 'verified' : 'hashed',
      seconds: (performance.now() - t0) / 1000,
    };
  } finally {
    unlock();
  }
}

function gb(bytes: number): string {
  return `${(bytes / 1e9).toFixed(bytes < 10e9 ? 2 : 1)} GB`;
}
