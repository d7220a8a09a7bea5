// The model downloads the running agent does for the console ("Download" beside a recommended model): each
// one is `downloadModel` (model-download.ts: disk checked first, sha256 in the same pass, resume, manifest
// last) with its live progress kept for the console, cancellable, one at a time per model. The CLI's
// `models download` runs the same function in its own process; the folder's lock keeps the two apart.
import type { Logger } from '../base/log';
import type { ModelDownloadView } from '../../shared/views/managed';
import { downloadModel, type ModelProgress } from './model-download';
import { downloadedWeights } from './models-dir';

/** Finished downloads kept for the console (the oldest forgotten first). */
const KEEP_FINISHED = 20;
/** The console hears of progress at most this often. */
const CHANGED_EVERY_MS = 250;

export interface ModelDownloadsDeps {
  modelsDir: string;
  log: Logger;
  /** Something the console shows changed (the models folder too: recommendations' "on disk"). */
  changed: () => void;
  /** The download itself (default downloadModel); tests give the same function with their own disk figures. */
  download?: typeof downloadModel;
}

interface Job {
  view: ModelDownloadView;
  ctl: AbortController;
  done: Promise<void>;
}

export class ModelDownloads {
  private readonly jobs = new Map<string, Job>();
  private lastChanged = 0;

  constructor(private readonly d: ModelDownloadsDeps) {}

  get modelsDir(): string {
    return this.d.modelsDir;
  }

  list(): ModelDownloadView[] {
    return [...this.jobs.values()].map((j) => ({ ...j.view })).sort((a, b) => b.startedAt - a.startedAt);
  }

  /** Starts a download from the repository at `serviceUrl` (joins the running one of the same model). */
  start(modelId: string, serviceUrl: string): ModelDownloadView {
    const running = this.jobs.get(modelId);
    if (running && !running.view.finishedAt) return { ...running.view };
    const ctl = new AbortController();
    const view: ModelDownloadView = {
      modelId,
      phase: 'listing',
      fileIndex: 0,
      fileCount: 0,
      doneBytes: 0,
      totalBytes: 0,
      rateBytesPerSec: 0,
      etaSeconds: null,
      startedAt: Date.now(),
    };
    const l = this.d.log;
    l.info(`downloading ${modelId} from ${serviceUrl} into ${this.d.modelsDir}`);
    const done = (this.d.download ?? downloadModel)({
      serviceUrl,
      modelsDir: this.d.modelsDir,
      modelId,
      signal: ctl.signal,
      onProgress: (p) => this.progress(view, p),
    }).then(
      (r) => {
        Object.assign(view, {
          phase: r.state,
          finishedAt: Date.now(),
          dir: r.dir,
          compositeHash: r.manifest.composite_hash,
          doneBytes: view.totalBytes,
          etaSeconds: 0,
          rateBytesPerSec: 0,
        });
        const weights = downloadedWeights(this.d.modelsDir, modelId, 'llamacpp');
        if (weights) view.weights = weights;
        l.info(`${modelId}: ${r.state} (${r.files.length} file(s), composite sha256 ${r.manifest.composite_hash}) in ${r.dir}`, {
          code: `download_${r.state}`,
        });
        this.d.changed();
      },
      (e: unknown) => {
        const code = (e as { code?: string }).code ?? 'download_failed';
        Object.assign(view, {
          phase: code === 'cancelled' ? 'cancelled' : 'failed',
          finishedAt: Date.now(),
          code,
          error: e instanceof Error ? e.message : String(e),
          rateBytesPerSec: 0,
          etaSeconds: null,
        });
        if (code === 'cancelled') l.info(`${modelId}: download cancelled; what arrived is kept and the next download resumes from it`, { code });
        else l.warn(`${modelId}: download failed: ${view.error}`, { code });
        this.d.changed();
      },
    );
    this.jobs.set(modelId, { view, ctl, done });
    this.forgetOld();
    this.d.changed();
    return { ...view };
  }

  /** Cancels a running download; false when none runs for it. What arrived stays, for a resume. */
  cancel(modelId: string): boolean {
    const j = this.jobs.get(modelId);
    if (!j || j.view.finishedAt) return false;
    j.ctl.abort();
    return true;
  }

  /** Cancels every running download and waits for each to end (the agent's stop). */
  async stop(): Promise<void> {
    for (const j of this.jobs.values()) if (!j.view.finishedAt) j.ctl.abort();
    await Promise.all([...this.jobs.values()].map((j) => j.done));
  }

  /** Resolves when the model's current download has ended (tests, and the CLI's follow). */
  settled(modelId: string): Promise<void> {
    return this.jobs.get(modelId)?.done ?? Promise.resolve();
  }

  private progress(view: ModelDownloadView, p: ModelProgress): void {
    if (view.finishedAt) return;
    // 'verified' from the progress stream is only the last file's: the result says verified or hashed.
    if (p.phase !== 'verified') view.phase = p.phase;
    Object.assign(view, {
      fileIndex: p.fileIndex,
      fileCount: p.fileCount,
      doneBytes: p.doneBytes,
      totalBytes: p.totalBytes,
      rateBytesPerSec: p.rateBytesPerSec,
      etaSeconds: p.etaSeconds,
    });
    if (p.file !== undefined) view.file = p.file;
    const now = Date.now();
    if (p.phase !== 'downloading' || now - this.lastChanged >= CHANGED_EVERY_MS) {
      this.lastChanged = now;
      this.d.changed();
    }
  }

  private forgetOld(): void {
    const finished = [...this.jobs.values()].filter((j) => j.view.finishedAt).sort((a, b) => a.view.startedAt - b.view.startedAt);
    for (const j of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.jobs.delete(j.view.modelId);
  }
}
