// Engines & models' verbs about the engines this agent runs: list, serve (recorded in the home as
// `models serve` records it, then started), stop.
import { BridgeError } from '../../shared/bridge-error';
import type { ModelState } from '../../shared/types';
import type { SettingsFile } from '../config/settings-file';
import type { Engines } from '../engines/engines';
import { parseServeSpec, ServeError } from '../managed/spec';
import type { Verbs } from './verbs';

type ManagedChannel = 'managed.list' | 'managed.serve' | 'managed.stop' | 'models.confirmMapping';

export interface ManagedVerbDeps {
  engines: Pick<Engines, 'managed' | 'registry' | 'models'>;
  settings: SettingsFile;
  /** The models as the snapshot shows them (after a change). */
  models: () => ModelState[];
}

export function managedVerbs(d: ManagedVerbDeps): Verbs<ManagedChannel> {
  const { managed, registry } = d.engines;
  return {
    // The signature names the finding the owner saw: a confirmation never covers a finding made since.
    'models.confirmMapping': ({ model, signature }) => {
      const f = registry.mappingOf(model);
      if (!f || f.code === 'mapping_unchecked') throw new BridgeError('not_found', `Nothing holds ${model} back: its engine's report does not contradict it.`, 'model');
      if (f.signature !== signature) throw new BridgeError('refused', `What the engine reports for ${model} changed since you looked: check it again before confirming.`, 'signature');
      d.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], confirmedMapping: signature } } }));
      d.engines.models.rebuild();
      return d.models();
    },
    'managed.list': () => managed.view(),
    'managed.serve': async (a) => {
      try {
        await managed.serve(parseServeSpec({ ...a, backend: a.backend ?? 'llamacpp', args: [], addedAt: Date.now() }));
      } catch (e) {
        if (e instanceof ServeError) throw new BridgeError('invalid_args', e.message, e.code === 'bad_gpus' ? 'gpus' : e.code.startsWith('weights') ? 'weights' : 'id');
        throw e;
      }
      return managed.view();
    },
    'managed.stop': async ({ id }) => {
      if (!(await managed.remove(id))) throw new BridgeError('not_found', `This agent does not run ${id}: nothing was stopped. Engines it did not start are never stopped from here.`, 'id');
      return managed.view();
    },
  };
}
