// The Dashboard's serving verbs: pause and resume, dial the hub now, ask the platform about the key again,
// the hub's notices.
import type { Engines } from '../engines/engines';
import type { Serving } from '../serving/serving';
import type { Verbs } from './verbs';
import { readPowerLimits } from '../gpu/power-limit';

export function servingVerbs(d: {
  engines: Pick<Engines, 'pause'>;
  serving: Pick<Serving, 'link' | 'providerGate' | 'notices' | 'setPowerLimit'>;
  env: NodeJS.ProcessEnv;
}): Verbs<'serving.pause' | 'serving.resume' | 'link.retry' | 'providerStatus.refresh' | 'notices.list' | 'gpu.powerLimits' | 'gpu.setPowerLimit'> {
  const { pause } = d.engines;
  const { link } = d.serving;
  return {
    'serving.pause': ({ reason }) => {
      pause.pauseManual(reason);
      return pause.state();
    },
    'serving.resume': () => {
      pause.resumeManual();
      return pause.state();
    },
    'link.retry': () => {
      link.retryNow();
      return link.state;
    },
    'providerStatus.refresh': () => d.serving.providerGate.check(),
    'notices.list': () => d.serving.notices.list(),
    'gpu.powerLimits': () => readPowerLimits(d.env),
    'gpu.setPowerLimit': ({ index, watts }) => d.serving.setPowerLimit(index, watts),
  };
}
