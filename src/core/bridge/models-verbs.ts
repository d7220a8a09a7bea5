// The Models table's verbs: switch a model on or off, its limits, warm it up, try it with a prompt.
import type { ModelState } from '../../shared/types';
import { BridgeError } from '../../shared/bridge-error';
import type { SettingsFile } from '../config/settings-file';
import type { Engines } from '../engines/engines';
import { startTestPrompt } from './console-extras';
import type { Verbs } from './verbs';

export interface ModelVerbDeps {
  engines: Pick<Engines, 'registry' | 'models' | 'warmup' | 'runner'>;
  settings: SettingsFile;
  /** The models as the snapshot shows them (after a change). */
  models: () => ModelState[];
}

export function modelVerbs(d: ModelVerbDeps): Verbs<'models.setEnabled' | 'models.setLimits' | 'models.warmup' | 'models.try'> {
  const { registry } = d.engines;
  return {
    'models.setEnabled': ({ model, enabled }) => {
      if (!registry.get(model)) throw new BridgeError('not_found', `No model "${model}" is known here. Rescan engines or add it to models.json.`);
      d.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], enabled } } }));
      d.engines.models.rebuild();
      return d.models();
    },
    'models.warmup': ({ model }) => d.engines.warmup.run(model),
    'models.setLimits': ({ model, maxConcurrent, maxQueue }) => {
      if (!registry.get(model)) throw new BridgeError('not_found', `No model "${model}" is known here.`);
      d.settings.update((s) => ({ ...s, models: { ...s.models, [model]: { ...s.models?.[model], maxConcurrent, maxQueue } } }));
      d.engines.models.rebuild();
      return d.models();
    },
    'models.try': ({ model, prompt, maxTokens }) => startTestPrompt(d.engines, model, prompt, maxTokens ?? 128),
  };
}
