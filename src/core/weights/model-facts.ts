// What each served model's engine says of it (locate.ts: where its files are, its precision, what it
// reads), read once per engine and model when the model is announced, again when that engine comes back
// (it may have been restarted with other weights), and handed to the weights service so the files are
// hashed. The declarations (serving/announce.ts) read the facts from here: registration never waits on an
// engine, and a heartbeat never asks one.
import { EventEmitter } from 'node:events';
import type { EngineType } from '../../shared/types';
import type { Logger } from '../base/log';
import { locateModel, type EngineReader, type LocateEnv, type ModelFacts } from './locate';
import type { Weights } from './weights';

export interface FactsTarget {
  /** The hub-facing model id. */
  model: string;
  endpoints: Array<{ url: string; engineType?: EngineType; apiKey?: string; localModel?: string }>;
}

export interface ModelFactsEvents {
  /** Some model's facts changed (the declarations should be built again). */
  change: [];
}

export class ModelFactsBook extends EventEmitter<ModelFactsEvents> {
  /** By `url \0 engine model \0 type`. */
  private readonly byEndpoint = new Map<string, ModelFacts>();
  private targets: FactsTarget[] = [];
  private running: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly o: {
      read: EngineReader;
      where: LocateEnv;
      weights: Pick<Weights, 'sync'>;
      log: Logger;
      /** The engine type of an endpoint whose type the registry does not know (context-length.ts identifies it). */
      typeOf?: (url: string) => EngineType | undefined;
    },
  ) {
    super();
  }

  /** The facts of a model: those of its first endpoint whose engine located the files, else of its first. */
  facts(model: string): ModelFacts | undefined {
    const t = this.targets.find((x) => x.model === model);
    if (!t) return undefined;
    const all = t.endpoints.map((ep) => this.byEndpoint.get(this.key(ep, model))).filter((f): f is ModelFacts => !!f);
    return all.find((f) => f.location.ok) ?? all[0];
  }

  /**
   * The announced models now: reads what is not known yet (or, with `urls`, everything at those engines
   * again), then syncs the weights. Runs one at a time; resolves when done.
   */
  refresh(targets: FactsTarget[], urls?: string[]): Promise<void> {
    this.targets = targets;
    const run = async (): Promise<void> => {
      if (this.closed) return;
      let changed = false;
      const wanted = new Set<string>();
      await Promise.all(
        targets.flatMap((t) =>
          t.endpoints.map(async (ep) => {
            const key = this.key(ep, t.model);
            wanted.add(key);
            if (this.byEndpoint.has(key) && !urls?.includes(ep.url)) return;
            const type = ep.engineType && ep.engineType !== 'unknown' ? ep.engineType : this.o.typeOf?.(ep.url);
            const facts = await locateModel(
              { url: ep.url, ...(type ? { type } : {}), ...(ep.apiKey ? { apiKey: ep.apiKey } : {}) },
              ep.localModel ?? t.model,
              this.o.read,
              this.o.where,
            ).catch((e: Error): ModelFacts => ({ location: { ok: false, reason: `reading the engine failed: ${e.message}` } }));
            const prev = this.byEndpoint.get(key);
            if (JSON.stringify(prev) !== JSON.stringify(facts)) {
              changed = true;
              if (!facts.location.ok) this.o.log.info(`weights of ${t.model} at ${ep.url}: ${facts.location.reason}`);
            }
            this.byEndpoint.set(key, facts);
          }),
        ),
      );
      for (const k of [...this.byEndpoint.keys()]) if (!wanted.has(k)) this.byEndpoint.delete(k);
      if (this.closed) return;
      this.o.weights.sync(this.targets.map((t) => ({ model: t.model, ...(this.facts(t.model) ? { location: this.facts(t.model)!.location } : {}) })));
      if (changed) this.emit('change');
    };
    this.running = this.running.then(run, run);
    return this.running;
  }

  close(): void {
    this.closed = true;
  }

  private key(ep: FactsTarget['endpoints'][number], model: string): string {
    return `${ep.url}\0${ep.localModel ?? model}\0${ep.engineType ?? ''}`;
  }
}
