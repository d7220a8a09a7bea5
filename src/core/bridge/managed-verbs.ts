// Engines & models' verbs for the path from a GPU to a served model: what this GPU should serve
// (recommend), fetching it verified (downloads), the engines this agent runs (list, serve — recorded in
// the home as `models serve` records it, then started — and stop), and confirming a contradicted mapping.
import { BridgeError } from '../../shared/bridge-error';
import type { ModelState } from '../../shared/types';
import type { RecommendView } from '../../shared/views/managed';
import type { SettingsFile } from '../config/settings-file';
import type { Engines } from '../engines/engines';
import { downloadedWeights } from '../downloads/models-dir';
import { GIB, gib } from '../fit/estimate';
import { recommend } from '../fit/recommend';
import { parseServeSpec, ServeError } from '../managed/spec';
import type { Verbs } from './verbs';

type ManagedChannel =
  | 'managed.list'
  | 'managed.serve'
  | 'managed.stop'
  | 'models.confirmMapping'
  | 'models.recommend'
  | 'models.serveAs'
  | 'models.catalogueIds'
  | 'downloads.list'
  | 'downloads.start'
  | 'downloads.cancel';

export interface ManagedVerbDeps {
  engines: Pick<Engines, 'managed' | 'registry' | 'models' | 'downloads' | 'gpu'>;
  settings: SettingsFile;
  /** The network's API (its model repository and demand table). */
  serviceUrl: () => string;
  /** The catalogue's ids as last read; undefined before the catalogue was read. */
  catalogueIds: () => string[] | undefined;
  /** Writes the models.json line announcing an engine's model under a catalogue id; answers models.json's path. */
  serveAs: (networkId: string, engineUrl: string, localModel: string) => string;
  /** The models as the snapshot shows them (after a change). */
  models: () => ModelState[];
}

export function managedVerbs(d: ManagedVerbDeps): Verbs<ManagedChannel> {
  const { managed, registry, downloads } = d.engines;
  return {
    'models.recommend': async ({ vramGb }): Promise<RecommendView> => {
      const gpus = d.engines.gpu.gpus;
      const totalMb = gpus.reduce((s, g) => s + g.vramTotalMb, 0);
      const budget = vramGb !== undefined ? vramGb * GIB : totalMb > 0 ? totalMb * 1024 * 1024 : undefined;
      const gpu =
        vramGb !== undefined
          ? `planning for ${vramGb} GiB of GPU memory`
          : budget !== undefined
            ? `${gpus.length} GPU(s), ${gib(budget)} in all: ${gpus.map((g) => g.model).join(', ')}`
            : `no GPU reported its memory${d.engines.gpu.note ? ` (${d.engines.gpu.note})` : ''}`;
      const serviceUrl = d.serviceUrl();
      const { rows, notes } = await recommend({ serviceUrl, modelsDir: downloads.modelsDir, budgetBytes: budget });
      return {
        serviceUrl,
        gpu,
        budgetBytes: budget ?? null,
        modelsDir: downloads.modelsDir,
        notes,
        rows: rows.map((r) => ({
          modelId: r.modelId,
          name: r.name,
          fit: r.fit.fit,
          ...(r.fit.code ? { fitCode: r.fit.code } : {}),
          ...(r.fit.reason ? { fitReason: r.fit.reason } : {}),
          ...(r.fit.needBytes !== undefined ? { needBytes: r.fit.needBytes } : {}),
          ...(r.fit.basis ? { basis: r.fit.basis } : {}),
          exact: r.estimate.known && r.estimate.exact,
          earnHereDaily: r.earnHereDaily ?? null,
          requests24h: r.demand?.requests24h ?? null,
          demandTrend: r.demand?.demandTrend ?? null,
          onlineProviders: r.demand?.onlineProviders ?? null,
          onDisk: r.onDisk,
          inRepository: r.inRepository,
          sizeBytes: r.sizeBytes,
          contextLength: r.plan.contextLength,
          slots: r.plan.slots,
        })),
      };
    },
    'models.catalogueIds': () => d.catalogueIds() ?? [],
    'models.serveAs': ({ model, networkId }) => {
      const m = d.models().find((x) => x.id === model);
      const ep = m?.endpoints[0];
      if (!m || !ep) throw new BridgeError('not_found', `No engine here serves ${model}: start its engine (or Rescan), then pick again.`, 'model');
      const ids = d.catalogueIds();
      if (!ids)
        throw new BridgeError(
          'refused',
          "The network's catalogue has not been read, so it cannot be checked that it routes this id. Check the network address in Settings, then try again.",
          'networkId',
        );
      if (!ids.includes(networkId))
        throw new BridgeError(
          'invalid_args',
          `${networkId} is not in the network's catalogue: the network would not route it. Pick one of its ids.`,
          'networkId',
        );
      const modelsJson = d.serveAs(networkId, ep.url, ep.localModel ?? m.id);
      return { models: d.models(), modelsJson };
    },
    'downloads.list': () => downloads.list(),
    'downloads.start': ({ modelId }) => {
      downloads.start(modelId, d.serviceUrl());
      return downloads.list();
    },
    'downloads.cancel': ({ modelId }) => {
      if (!downloads.cancel(modelId)) throw new BridgeError('not_found', `No download of ${modelId} is running: nothing was cancelled.`, 'modelId');
      return downloads.list();
    },
    // The signature names the finding the owner saw: a confirmation never covers a finding made since.
    'models.confirmMapping': ({ model, signature }) => {
      const f = registry.mappingOf(model);
      if (!f || f.code === 'mapping_unchecked')
        throw new BridgeError('not_found', `Nothing holds ${model} back: its engine's report does not contradict it.`, 'model');
      if (f.signature !== signature)
        throw new BridgeError('refused', `What the engine reports for ${model} changed since you looked: check it again before confirming.`, 'signature');
      d.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], confirmedMapping: signature } } }));
      d.engines.models.rebuild();
      return d.models();
    },
    'managed.list': () => managed.view(),
    'managed.serve': async (a) => {
      try {
        const backend = a.backend ?? 'llamacpp';
        // A model downloaded here is served from its folder when no weights are named (as `models serve` does).
        const weights = a.weights ?? downloadedWeights(downloads.modelsDir, a.id, backend);
        await managed.serve(parseServeSpec({ ...a, backend, ...(weights ? { weights } : {}), args: [], addedAt: Date.now() }));
      } catch (e) {
        if (e instanceof ServeError)
          throw new BridgeError('invalid_args', e.message, e.code === 'bad_gpus' ? 'gpus' : e.code.startsWith('weights') ? 'weights' : 'id');
        throw e;
      }
      return managed.view();
    },
    'managed.stop': async ({ id }) => {
      if (!(await managed.remove(id)))
        throw new BridgeError('not_found', `This agent does not run ${id}: nothing was stopped. Engines it did not start are never stopped from here.`, 'id');
      return managed.view();
    },
  };
}
