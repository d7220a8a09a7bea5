// The weights this node can prove, per served model (docs/hub-dialect.md, "Weights"):
//   1. a Go node's manifest, ~/.swan/models/<model_id>/.swan-hash-manifest.json, when there is one (the Go
//      node writes it when it downloads a model), read at each registration;
//   2. otherwise the files the engine serves the model from (locate.ts), hashed here on a worker thread
//      (hasher.ts), one file at a time at the disk's speed, each file once (file-hashes.ts: by real path,
//      size and modification time), into a manifest of Go's shape kept in <home>/weights/manifests/.
// A model's composite hash is declared to the hub (weight_hash) once every file is hashed, and the hub's
// fingerprint challenges are answered from the manifest (hub/verify.ts).
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { ModelWeightsView, WeightsView } from '../../shared/types';
import type { Logger } from '../base/log';
import { FileHashes } from './file-hashes';
import { HashError, WorkerHasher, type FileHasher } from './hasher';
import { makeManifest, ownManifestPath, readGoManifest, readManifestFile, writeManifest, type HashManifest } from './manifest';

/** The files an engine serves a model from. */
export interface LocatedFiles {
  /** The folder the names are relative to. */
  root: string;
  /** The manifest's filename ('/'-separated, relative to root) and the path to read. */
  files: Array<{ filename: string; path: string }>;
  /** How the engine told ("llama.cpp /props model_path"), for the console. */
  via: string;
}

export type Location = { ok: true; located: LocatedFiles } | { ok: false; reason: string };

export interface WeightsTarget {
  model: string;
  location?: Location;
}

export interface WeightsOptions {
  /** <home>/weights: the file-hash cache and this node's manifests. */
  dir: string;
  /** Where a Go node keeps downloaded models (~/.swan/models); undefined: not looked up. */
  goModelsDir?: string;
  /** This agent's own models folder (`swan-provider models download`, the console's downloads): the same layout, looked up first. */
  modelsDir?: string;
  log: Logger;
  hasher?: FileHasher;
  /** A progress line in the log at most this often while hashing (default 10 s). */
  progressLogMs?: number;
  /** A `progress` event (the console's snapshot) at most this often (default 250 ms). */
  progressEventMs?: number;
}

interface FileState {
  filename: string;
  /** The real path (symlinks resolved: a Hugging Face snapshot links into blobs/). */
  path: string;
  size: number;
  mtimeMs: number;
  sha256?: string;
}

interface Entry {
  model: string;
  state: ModelWeightsView['state'];
  source?: 'go-manifest' | 'computed';
  root?: string;
  via?: string;
  reason?: string;
  files: FileState[];
  manifest?: HashManifest;
  /** The located files as last synced (path, size, mtime): a sync with the same keeps the entry as it is. */
  key: string;
  /** Bytes of the file being hashed now. */
  inFlight: number;
}

export interface WeightsEvents {
  /** A model's weights became verified (its composite is now known) or its state changed. */
  change: [];
  /** Hashing moved on (a few times a second at most). */
  progress: [];
}

/** A file the hub may name: what this node knows of it. */
export type FileLookup = { state: 'known'; hash: string } | { state: 'pending' } | { state: 'absent' };

const GB = 1e9;
const gb = (n: number): string => (n / GB).toFixed(1);

export class Weights extends EventEmitter<WeightsEvents> {
  private readonly entries = new Map<string, Entry>();
  private readonly cache: FileHashes;
  private readonly hasher: FileHasher;
  private readonly manifestDir: string;
  private readonly priority: string[] = [];
  private pumping?: Promise<void>;
  private hashing?: { model: string; file: string; done: number; size: number };
  private closed = false;
  private lastProgressEmit = 0;
  private lastProgressLog = 0;

  constructor(private readonly o: WeightsOptions) {
    super();
    this.cache = new FileHashes(path.join(o.dir, 'file-hashes.json'), o.log);
    this.hasher = o.hasher ?? new WorkerHasher();
    this.manifestDir = path.join(o.dir, 'manifests');
  }

  /** Brings the set in step with the served models and where their files are; hashing starts as needed. */
  sync(targets: WeightsTarget[]): void {
    if (this.closed) return;
    let changed = false;
    const wanted = new Set(targets.map((t) => t.model));
    for (const id of [...this.entries.keys()]) {
      if (!wanted.has(id)) {
        this.entries.delete(id);
        changed = true;
      }
    }
    for (const t of targets) changed = this.syncOne(t) || changed;
    if (changed) this.emit('change');
    this.pump();
  }

  /** The complete manifest of a model (every file hashed, or a Go node's), else undefined. */
  manifest(model: string): HashManifest | undefined {
    return this.entries.get(model)?.manifest;
  }

  /** The model's composite sha256, when every file is known. */
  compositeHash(model: string): string | undefined {
    return this.entries.get(model)?.manifest?.composite_hash || undefined;
  }

  /** What this node knows of one file the hub names (see fileFor for how a name is matched). */
  lookup(model: string, filename: string): FileLookup {
    const e = this.entries.get(model);
    if (!e) return { state: 'absent' };
    if (e.source === 'go-manifest' && e.manifest) {
      const f = matchFile(e.manifest.files, filename);
      return f ? { state: 'known', hash: f.hash } : { state: 'absent' };
    }
    const f = matchFile(e.files, filename);
    if (!f) return { state: 'absent' };
    return f.sha256 ? { state: 'known', hash: f.sha256 } : { state: 'pending' };
  }

  /** How a model stands: for verify (why it cannot answer) and the console. */
  status(model: string): ModelWeightsView | undefined {
    const e = this.entries.get(model);
    return e ? this.viewOf(e) : undefined;
  }

  /** Hash this model's files before any other's (a challenge waits for them). */
  prioritize(model: string): void {
    if (!this.priority.includes(model)) this.priority.unshift(model);
  }

  /** Resolves when none of `filenames` is pending for the model, or after `timeoutMs`. */
  async settled(model: string, filenames: string[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const pending = (): boolean => filenames.some((f) => this.lookup(model, f).state === 'pending');
    if (!pending()) return;
    this.prioritize(model);
    this.pump();
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.off('change', check);
        this.off('progress', check);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const check = (): void => {
        if (!pending() || this.closed) done();
      };
      const timer = setTimeout(done, timeoutMs);
      this.on('change', check);
      this.on('progress', check);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  view(): WeightsView {
    const models = [...this.entries.values()].sort((a, b) => a.model.localeCompare(b.model)).map((e) => this.viewOf(e));
    const h = this.hashing;
    return { models, ...(h ? { hashing: { model: h.model, file: h.file, doneBytes: h.done, totalBytes: h.size } } : {}) };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.hasher.stop();
    await this.pumping;
    this.cache.flush();
  }

  // ---- internals ----

  private viewOf(e: Entry): ModelWeightsView {
    const totalBytes = e.files.reduce((s, f) => s + f.size, 0);
    const doneBytes = e.files.reduce((s, f) => s + (f.sha256 ? f.size : 0), 0) + e.inFlight;
    return {
      model: e.model,
      state: e.state,
      ...(e.source ? { source: e.source } : {}),
      ...(e.root ? { root: e.root } : {}),
      files: e.files.length,
      totalBytes,
      doneBytes: Math.min(doneBytes, totalBytes),
      ...(e.manifest?.composite_hash ? { compositeHash: e.manifest.composite_hash } : {}),
      ...(e.reason ? { reason: e.reason } : {}),
    };
  }

  /** Returns true when the model's entry changed. */
  private syncOne(t: WeightsTarget): boolean {
    const prev = this.entries.get(t.model);
    // 1. A Go node's manifest wins: it lists the very files the hub's catalogue names.
    for (const modelsDir of [this.o.modelsDir, this.o.goModelsDir]) {
      if (!modelsDir) continue;
      const go = readGoManifest(modelsDir, t.model);
      if (go.ok) {
        const key = `go:${go.manifest.composite_hash}`;
        if (prev?.key === key) return false;
        this.entries.set(t.model, {
          model: t.model,
          state: 'verified',
          source: 'go-manifest',
          root: path.join(modelsDir, t.model),
          via: modelsDir === this.o.modelsDir ? 'the manifest of its download' : "the Go node's manifest",
          files: go.manifest.files.map((f) => ({ filename: f.filename, path: '', size: f.size_bytes, mtimeMs: 0, sha256: f.hash })),
          manifest: go.manifest,
          key,
          inFlight: 0,
        });
        this.o.log.info(
          `weights of ${t.model}: the Go node's manifest (${go.manifest.files.length} files, sha256 ${go.manifest.composite_hash.slice(0, 16)}…)`,
        );
        return true;
      }
      if (!go.absent) this.o.log.warn(`ignored the Go node's manifest of ${t.model}: ${go.error}`);
    }
    // 2. The files the engine serves from.
    const loc = t.location;
    if (!loc || !loc.ok) {
      const reason = loc ? loc.reason : 'not located yet';
      const key = `none:${reason}`;
      if (prev?.key === key) return false;
      this.entries.set(t.model, { model: t.model, state: 'unlocated', reason, files: [], key, inFlight: 0 });
      return true;
    }
    const files: FileState[] = [];
    const gone: string[] = [];
    for (const f of loc.located.files) {
      try {
        const real = fs.realpathSync(f.path);
        const st = fs.statSync(real);
        if (!st.isFile()) throw new Error('not a file');
        files.push({ filename: f.filename, path: real, size: st.size, mtimeMs: st.mtimeMs, ...this.known(real, st.size, st.mtimeMs) });
      } catch {
        gone.push(f.filename);
      }
    }
    const key = `files:${loc.located.root}:${JSON.stringify(files.map((f) => [f.filename, f.path, f.size, f.mtimeMs]))}`;
    if (prev?.key === key) return false;
    if (files.length === 0) {
      const reason = `${loc.located.via} names ${loc.located.root}, which is not readable on this machine`;
      this.entries.set(t.model, { model: t.model, state: 'unlocated', reason, files: [], key, inFlight: 0 });
      return true;
    }
    if (gone.length > 0)
      this.o.log.warn(`weights of ${t.model}: ${gone.length} file(s) the engine names are not readable here (${gone.slice(0, 3).join(', ')})`);
    const e: Entry = { model: t.model, state: 'queued', source: 'computed', root: loc.located.root, via: loc.located.via, files, key, inFlight: 0 };
    this.entries.set(t.model, e);
    if (files.every((f) => f.sha256)) this.finish(e, false);
    else {
      const bytes = files.reduce((s, f) => s + (f.sha256 ? 0 : f.size), 0);
      this.o.log.info(`weights of ${t.model}: ${files.length} file(s) in ${loc.located.root} (${loc.located.via}); ${gb(bytes)} GB to hash once`);
    }
    return true;
  }

  private known(real: string, size: number, mtimeMs: number): { sha256?: string } {
    const h = this.cache.get(real, size, mtimeMs);
    return h ? { sha256: h } : {};
  }

  /** Every file known: the manifest, kept on disk in Go's shape (plus where the files are). */
  private finish(e: Entry, justHashed: boolean): void {
    const manifest = makeManifest(
      e.model,
      e.files.map((f) => ({ filename: f.filename, hash: f.sha256 as string, size_bytes: f.size })),
    );
    e.manifest = manifest;
    e.state = 'verified';
    e.inFlight = 0;
    if (justHashed) this.cache.flush();
    const file = ownManifestPath(this.manifestDir, e.model);
    const onDisk = readManifestFile(file, e.model);
    if (!onDisk.ok || onDisk.manifest.composite_hash !== manifest.composite_hash) {
      try {
        writeManifest(file, { ...manifest, root: e.root, via: e.via });
      } catch (err) {
        this.o.log.warn(`could not write ${file}: ${(err as Error).message}`);
      }
    }
    const bytes = e.files.reduce((s, f) => s + f.size, 0);
    this.o.log[justHashed ? 'info' : 'debug'](
      `weights of ${e.model} verified: ${e.files.length} file(s), ${gb(bytes)} GB, sha256 ${manifest.composite_hash.slice(0, 16)}…`,
    );
  }

  private nextEntry(): Entry | undefined {
    const waiting = [...this.entries.values()].filter((e) => e.source === 'computed' && e.files.some((f) => !f.sha256) && e.state !== 'failed');
    for (const id of this.priority) {
      const e = waiting.find((w) => w.model === id);
      if (e) return e;
    }
    return waiting[0];
  }

  private pump(): void {
    if (this.pumping || this.closed || !this.nextEntry()) return;
    this.pumping = this.run().finally(() => {
      this.pumping = undefined;
      this.hashing = undefined;
      if (!this.closed && this.nextEntry()) this.pump();
      else void this.hasher.stop();
    });
  }

  private async run(): Promise<void> {
    for (let e = this.nextEntry(); e && !this.closed; e = this.nextEntry()) {
      const entry = e;
      const file = entry.files.find((f) => !f.sha256)!;
      entry.state = 'hashing';
      this.hashing = { model: entry.model, file: file.filename, done: 0, size: file.size };
      this.emitProgress(true);
      const started = Date.now();
      try {
        const h = await this.hasher.hash(file.path, (done) => {
          entry.inFlight = done;
          if (this.hashing) this.hashing.done = done;
          this.emitProgress(false);
        });
        entry.inFlight = 0;
        this.cache.set(file.path, h);
        if (this.entries.get(entry.model) !== entry) continue; // the model left while its file was read
        file.sha256 = h.sha256;
        file.size = h.size;
        file.mtimeMs = h.mtimeMs;
        const secs = (Date.now() - started) / 1000;
        this.o.log.debug(`hashed ${file.path}: ${gb(h.size)} GB in ${secs.toFixed(1)} s`);
        if (entry.files.every((f) => f.sha256)) {
          this.finish(entry, true);
          this.priority.splice(0, this.priority.length, ...this.priority.filter((m) => m !== entry.model));
          this.emit('change');
        }
      } catch (err) {
        entry.inFlight = 0;
        const he = err instanceof HashError ? err : new HashError((err as Error).message, 'unreadable');
        if (he.code === 'stopped') return;
        if (this.entries.get(entry.model) !== entry) continue;
        if (he.code === 'missing') {
          entry.files = entry.files.filter((f) => f !== file);
          this.o.log.warn(`weights of ${entry.model}: ${file.filename} went away before it was hashed`);
          if (entry.files.length > 0 && entry.files.every((f) => f.sha256)) this.finish(entry, true);
          else if (entry.files.length === 0) Object.assign(entry, { state: 'unlocated', reason: 'the files went away before they were hashed' });
        } else if (he.code === 'changed') {
          // Being written (a download or copy): read it again once it settles, at the back of the queue.
          this.o.log.info(`weights of ${entry.model}: ${file.filename} changed while it was read; it is hashed again later`);
          try {
            const st = fs.statSync(file.path);
            file.size = st.size;
            file.mtimeMs = st.mtimeMs;
          } catch {
            /* hashed again, and found missing then */
          }
          this.entries.delete(entry.model);
          this.entries.set(entry.model, entry);
          entry.state = 'queued';
          await new Promise((r) => setTimeout(r, 1000).unref());
        } else {
          entry.state = 'failed';
          entry.reason = he.message;
          this.o.log.warn(`weights of ${entry.model} cannot be verified: ${he.message}`);
        }
        this.emit('change');
      } finally {
        this.hashing = undefined;
      }
    }
  }

  private emitProgress(force: boolean): void {
    const now = Date.now();
    const h = this.hashing;
    const v = h && this.status(h.model);
    if (v && now - this.lastProgressLog >= (this.o.progressLogMs ?? 10_000)) {
      this.lastProgressLog = now;
      this.o.log.info(`verifying weights of ${v.model}: ${gb(v.doneBytes)} of ${gb(v.totalBytes)} GB`);
    }
    if (force || now - this.lastProgressEmit >= (this.o.progressEventMs ?? 250)) {
      this.lastProgressEmit = now;
      this.emit('progress');
    }
  }
}

/**
 * The file a hub's filename means: the same relative name; else the same base name when only one file has
 * it; else, for a model served from one GGUF file (llama.cpp's model_path, Ollama's model blob), a GGUF name
 * the hub's catalogue uses for it. The hash sent is always that of the file this node serves.
 */
export function matchFile<T extends { filename: string }>(files: readonly T[], asked: string): T | undefined {
  const want = asked.replace(/\\/g, '/').replace(/^\.\//, '');
  const exact = files.find((f) => f.filename === want);
  if (exact) return exact;
  const base = want.split('/').pop() ?? want;
  const byBase = files.filter((f) => (f.filename.split('/').pop() ?? f.filename) === base);
  if (byBase.length === 1) return byBase[0];
  if (/\.gguf$/i.test(base) && files.length === 1 && isGgufName(files[0]!.filename)) return files[0];
  return undefined;
}

/** A GGUF file by its name: *.gguf, or an Ollama model blob (sha256-<hex>, a GGUF by Ollama's format). */
function isGgufName(name: string): boolean {
  return /\.gguf$/i.test(name) || /^sha256-[0-9a-f]{64}$/.test(name.split('/').pop() ?? '');
}
