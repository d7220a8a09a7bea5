// Engines & models' verbs about engines and GPUs: rescan, add or remove an engine address the owner names,
// the GPU charts and the GPU's process list.
import { BridgeError } from '../../shared/bridge-error';
import type { SettingsFile } from '../config/settings-file';
import { endpointKey, ownerEndpointUrl } from '../engine-client/url';
import { listGpuProcesses } from '../gpu/processes';
import { classifyHost } from '../http/address-class';
import type { Engines } from '../engines/engines';
import type { Owner } from '../owner/owner';
import type { Verbs } from './verbs';

export interface EngineVerbDeps {
  engines: Pick<Engines, 'registry' | 'models' | 'sampler' | 'gpuHistory' | 'gpuHolds'>;
  settings: SettingsFile;
  /** Adding an address outside this machine and the owner's network needs the owner. */
  owner: Pick<Owner, 'approvals' | 'approveWhere'>;
  env: NodeJS.ProcessEnv;
}

type EngineChannel = 'engines.rescan' | 'engines.addEndpoint' | 'engines.removeEndpoint' | 'gpu.history' | 'gpu.longHistory' | 'gpu.processes' | 'gpu.giveBack';

export function engineVerbs(d: EngineVerbDeps): Verbs<EngineChannel> {
  const { models, registry } = d.engines;
  /** Adds an engine endpoint the owner named and probes it (at once, or when the owner approved it). */
  const addEndpoint = async (base: string, model: string | undefined) => {
    d.settings.update((s) => ({
      ...s,
      extraEndpoints: [...(s.extraEndpoints ?? []).filter((e) => e.url !== base), { url: base, ...(model ? { model } : {}) }],
    }));
    await models.rescan([base]);
    // The owner named the model to serve from it: switch it on when the engine offers it.
    if (model && registry.get(model)) {
      d.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], enabled: true } } }));
      models.rebuild();
    }
    return models.engineList();
  };
  return {
    'engines.rescan': async () => {
      await models.rescan();
      return models.engineList();
    },
    'engines.addEndpoint': async ({ url, model }) => {
      let base: string;
      try {
        base = ownerEndpointUrl(url);
      } catch (e) {
        throw new BridgeError('invalid_args', (e as Error).message);
      }
      // Checked before anything is sent there: an address outside this machine and the owner's network
      // needs the owner; link-local and cloud-metadata ranges are never probed (a blind SSRF otherwise).
      const host = new URL(base).hostname;
      const where = await classifyHost(host);
      if (where === 'refused') {
        throw new BridgeError(
          'address_refused',
          `${host} is a link-local, cloud-metadata or unspecified address; no engine is added there. Use the engine's address on this machine (127.0.0.1) or your network.`,
          'url',
        );
      }
      const add = () => addEndpoint(base, model);
      if (where === 'public') {
        const summary = `Add the engine endpoint ${base}: the agent will send it requests (and the prompts in them), outside this machine and your local network.`;
        const confirmation = d.owner.approvals.request({ kind: 'engine_endpoint', summary, hosts: [new URL(base).host], apply: add });
        throw new BridgeError('OWNER_CONFIRMATION_REQUIRED', `${summary} Only you can allow this: ${d.owner.approveWhere(confirmation)}.`, 'url', confirmation);
      }
      return add();
    },
    'engines.removeEndpoint': async ({ url }) => {
      const key = endpointKey(url.trim());
      const added = d.settings.get().extraEndpoints ?? [];
      if (!added.some((e) => endpointKey(e.url) === key)) {
        throw new BridgeError(
          'not_found',
          `${key} was not added in the console, so it cannot be removed here. Addresses from config.toml (EngineHosts) or models.json are removed there.`,
          'url',
        );
      }
      d.settings.update((s) => ({ ...s, extraEndpoints: (s.extraEndpoints ?? []).filter((e) => endpointKey(e.url) !== key) }));
      models.forget(key);
      await models.rescan();
      return models.engineList();
    },
    'gpu.history': ({ minutes }) => d.engines.sampler?.history(minutes) ?? [],
    'gpu.longHistory': ({ hours }: { hours: number }) => d.engines.gpuHistory?.since(Date.now() - hours * 3_600_000) ?? [],
    'gpu.giveBack': ({ index, givenBack }) => d.engines.gpuHolds.giveBack(index, givenBack),
    'gpu.processes': async () => {
      try {
        return await listGpuProcesses({ env: d.env });
      } catch (e) {
        throw new BridgeError('unavailable', `The GPU process list is unavailable: ${(e as Error).message}`);
      }
    },
  };
}
