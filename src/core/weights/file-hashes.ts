// The sha256 of every weight file this node has read, keyed by its real path, size and modification time:
// a file is hashed once, and again only when it changed. Kept in <home>/weights/file-hashes.json (0600).
import fs from 'node:fs';
import { writeJsonAtomic } from '../config/atomic-file';
import { parseJson } from '../http/bounded-json';
import type { Logger } from '../base/log';

export interface KnownHash {
  size: number;
  mtimeMs: number;
  sha256: string;
}

const SHA256_HEX = /^[0-9a-f]{64}$/;
/** Entries kept: far more files than any rig serves; the oldest unreferenced go first past it. */
const MAX_ENTRIES = 20_000;

/** Writes are gathered: a folder of thousands of small files is saved at most once a second, not once a file. */
const SAVE_DELAY_MS = 1000;

export class FileHashes {
  private readonly byPath = new Map<string, KnownHash>();
  private saveTimer?: NodeJS.Timeout;

  constructor(
    private readonly file: string,
    private readonly log: Logger,
  ) {
    this.load();
  }

  get(realPath: string, size: number, mtimeMs: number): string | undefined {
    const k = this.byPath.get(realPath);
    return k && k.size === size && k.mtimeMs === mtimeMs ? k.sha256 : undefined;
  }

  set(realPath: string, h: KnownHash): void {
    this.byPath.delete(realPath);
    this.byPath.set(realPath, h);
    while (this.byPath.size > MAX_ENTRIES) this.byPath.delete(this.byPath.keys().next().value as string);
    this.saveTimer ??= setTimeout(() => this.flush(), SAVE_DELAY_MS).unref();
  }

  /** Writes what is pending now (a model finished, the agent stops). */
  flush(): void {
    if (!this.saveTimer) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    this.save();
  }

  private load(): void {
    let raw: unknown;
    try {
      raw = parseJson(fs.readFileSync(this.file), { maxBytes: 64 * 1024 * 1024, maxDepth: 4, maxKeys: 200_000 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.log.warn(`ignored ${this.file} (${(e as Error).message}): weight files will be hashed again`);
      return;
    }
    const files = raw && typeof raw === 'object' ? (raw as { files?: unknown }).files : undefined;
    if (!files || typeof files !== 'object') return;
    // The file is ours, but a hand edit or a broken write must not make a wrong hash look known.
    for (const [p, v] of Object.entries(files as Record<string, unknown>)) {
      const h = v as Partial<KnownHash> | null;
      if (h && typeof h.size === 'number' && typeof h.mtimeMs === 'number' && typeof h.sha256 === 'string' && SHA256_HEX.test(h.sha256)) {
        this.byPath.set(p, { size: h.size, mtimeMs: h.mtimeMs, sha256: h.sha256 });
      }
    }
  }

  private save(): void {
    try {
      writeJsonAtomic(this.file, { version: 1, files: Object.fromEntries(this.byPath) }, 0);
    } catch (e) {
      this.log.warn(`could not keep weight hashes in ${this.file}: ${(e as Error).message}. They are hashed again after a restart.`);
    }
  }
}
