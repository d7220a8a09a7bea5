// Per-GPU serving on a rig with several GPUs: where each model runs (its placement), and which models are held
// because a GPU they run on is paused (scheduler/gpu-pauses.ts). A held model is refused locally (429 'paused'),
// left out of what the hub is told, and its memory freed where [Agent] PauseFreesGpu says so (an engine this
// agent started is stopped, its wish kept; Ollama unloads it); released, it comes back.
import type { GpuPlacementSource, GpuServingCause, GpuServingState } from '../../shared/types';
import { CodedError } from '../../shared/bridge-error';
import type { Logger } from '../base/log';
import type { ModelEntry } from '../config/config';
import type { ManagedEngines } from '../managed/supervisor';
import type { ModelRegistry } from '../models/registry';
import { GpuPauses } from '../scheduler/gpu-pauses';
import type { Scheduler } from '../scheduler/scheduler';

/** single_gpu: nothing to choose on this rig; gpu_unknown: no such GPU. */
export class GpuChoiceError extends CodedError<'single_gpu' | 'gpu_unknown'> {
  override name = 'GpuChoiceError';
}

export interface Placement {
  indexes: number[];
  source: GpuPlacementSource;
}

export interface ModelHold {
  gpu: number;
  cause: GpuServingCause;
  placement: GpuPlacementSource;
}

/** What a client is told when the model it asked for is held: never the owner's programs. */
const HELD_MESSAGE: Record<GpuServingCause, string> = {
  given_back: "The provider's GPU for this model is not serving now; try again later",
  gpu_busy: "The provider's GPU for this model is busy with other work; try again later",
  gpu_hot: "The provider's GPU for this model is cooling down; try again later",
  schedule: "The provider's GPU for this model is not serving now; try again later",
};

/** A managed engine's --gpus ("all", "none", "0,1", "device=0,1") as indexes; undefined or "all": every GPU. */
export function managedGpus(gpus: string | undefined, known: readonly number[]): number[] {
  if (!gpus || gpus === 'all') return [...known];
  if (gpus === 'none') return [];
  return gpus
    .replace(/^device=/, '')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n));
}

export interface GpuHoldsDeps {
  registry: Pick<ModelRegistry, 'all'>;
  scheduler: Pick<Scheduler, 'setHeld'>;
  managed: Pick<ManagedEngines, 'setHeld' | 'specs'>;
  /** models.json entries (the owner's `gpus`). */
  entries: () => Record<string, ModelEntry>;
  /** The GPUs the owner gave back (settings), applied whenever the GPUs are known. */
  givenBack: () => number[];
  /** Keeps the owner's choice (settings.json), so a restart gives the same GPUs back. */
  saveGivenBack: (indexes: number[]) => void;
  /** [Agent] PauseFreesGpu: held engines are stopped and Ollama's models unloaded. */
  freeMemory: boolean;
  unloadOllama: (models: ReadonlySet<string>) => Promise<void>;
  /** The served set changed. */
  announce: () => void;
  changed: () => void;
  inFlightOn?: (gpu: number) => number;
  log: Logger;
}

export class GpuHolds {
  readonly pauses: GpuPauses;
  /** Each found engine's GPUs as the driver says (engine address → indexes); absent: not known. */
  private readonly driver = new Map<string, number[]>();
  private held = new Map<string, ModelHold>();

  constructor(private readonly deps: GpuHoldsDeps) {
    this.pauses = new GpuPauses({ log: deps.log, ...(deps.inFlightOn ? { inFlightOn: deps.inFlightOn } : {}) });
    this.pauses.on('change', () => this.apply());
  }

  /** Detection found these GPUs: per-GPU serving applies from two on; the owner's choice is applied at once. */
  setKnown(indexes: readonly number[]): void {
    this.pauses.setKnown(indexes);
    this.pauses.setGivenBack(this.deps.givenBack());
    this.apply();
  }

  /**
   * The owner gives one GPU back (true) or lets it serve again (false): kept in settings and applied now. Only on
   * a rig with several GPUs (one GPU is the whole rig: the Dashboard's pause is its switch).
   */
  giveBack(gpu: number, back: boolean): GpuServingState[] {
    if (!this.pauses.perGpu) throw new GpuChoiceError('single_gpu', 'This machine has one GPU (or none found): pause serving from the Dashboard instead.');
    if (!this.pauses.state().some((s) => s.index === gpu))
      throw new GpuChoiceError('gpu_unknown', `There is no GPU ${gpu} on this machine. Pick one of the GPUs the Dashboard lists.`);
    const now = new Set(this.deps.givenBack());
    if (back) now.add(gpu);
    else now.delete(gpu);
    const list = [...now].sort((a, b) => a - b);
    this.deps.saveGivenBack(list);
    this.pauses.setGivenBack(list);
    return this.state();
  }

  /** The owner's choice changed in settings (another way than giveBack). */
  givenBackChanged(): void {
    this.pauses.setGivenBack(this.deps.givenBack());
  }

  /** The driver says on which GPUs the engine at `url` runs (undefined: it cannot say). */
  learn(url: string, indexes: number[] | undefined): void {
    const before = this.driver.get(url);
    if (indexes)
      this.driver.set(
        url,
        [...indexes].sort((a, b) => a - b),
      );
    else this.driver.delete(url);
    if (JSON.stringify(before) !== JSON.stringify(this.driver.get(url))) this.apply();
  }

  /** Where a model runs, and who says so. Unknown covers every GPU: the model may be on any of them. */
  placement(id: string, endpointUrls: readonly string[]): Placement {
    const known = this.pauses.state().map((s) => s.index);
    const owner = this.deps.entries()[id]?.gpus;
    if (owner) return { indexes: owner.filter((g) => known.includes(g)), source: 'owner' };
    const spec = this.deps.managed.specs().find((s) => s.id === id);
    if (spec) return { indexes: managedGpus(spec.gpus, known), source: 'managed' };
    const found = endpointUrls.map((u) => this.driver.get(u));
    if (found.length > 0 && found.every((f) => f !== undefined)) return { indexes: [...new Set(found.flat())].sort((a, b) => a - b), source: 'driver' };
    return { indexes: known, source: 'unknown' };
  }

  hold(id: string): ModelHold | undefined {
    return this.held.get(id);
  }

  isHeld(id: string): boolean {
    return this.held.has(id);
  }

  state(): GpuServingState[] {
    return this.pauses.perGpu ? this.pauses.state() : [];
  }

  close(): void {
    this.pauses.close();
  }

  /** Works out the held set again (a GPU paused or resumed, the models changed) and applies what moved. */
  apply(): void {
    const next = new Map<string, ModelHold>();
    if (this.pauses.perGpu) {
      const state = new Map(this.pauses.state().map((s) => [s.index, s]));
      const models = this.deps.registry.all().map((m) => ({ id: m.id, urls: m.endpoints.map((e) => e.url) }));
      // A managed engine held is stopped and so leaves the registry: it is still held.
      for (const s of this.deps.managed.specs()) if (!models.some((m) => m.id === s.id)) models.push({ id: s.id, urls: [] });
      for (const m of models) {
        const p = this.placement(m.id, m.urls);
        const paused = p.indexes.map((g) => state.get(g)).find((s) => s && !s.serving);
        if (paused?.cause) next.set(m.id, { gpu: paused.index, cause: paused.cause, placement: p.source });
      }
    }
    const same = next.size === this.held.size && [...next].every(([id, h]) => JSON.stringify(this.held.get(id)) === JSON.stringify(h));
    if (same) return;
    const newly = new Set([...next.keys()].filter((id) => !this.held.has(id)));
    this.held = next;
    this.deps.scheduler.setHeld(new Map([...next].map(([id, h]) => [id, HELD_MESSAGE[h.cause]])));
    if (this.deps.freeMemory) {
      void this.deps.managed.setHeld(new Set(next.keys()));
      if (newly.size > 0) void this.deps.unloadOllama(newly);
    }
    this.deps.announce();
    this.deps.changed();
  }
}
