// Engines & models' verbs about the engines this agent runs: list, serve (recorded in the home as
// `models serve` records it, then started), stop.
import { BridgeError } from '../../shared/bridge-error';
import type { Engines } from '../engines/engines';
import { parseServeSpec, ServeError } from '../managed/spec';
import type { Verbs } from './verbs';

type ManagedChannel = 'managed.list' | 'managed.serve' | 'managed.stop';

export function managedVerbs(d: { engines: Pick<Engines, 'managed'> }): Verbs<ManagedChannel> {
  const { managed } = d.engines;
  return {
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
