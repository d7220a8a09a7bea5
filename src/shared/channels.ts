// The bridge's channel names, with no dependencies, so the sandboxed preload can check them without
// bundling the schemas. src/shared/bridge.ts holds the schema of each (a test keeps the two in step).
export const INVOKE_CHANNELS = [
  'snapshot.get',
  'models.setEnabled',
  'models.warmup',
  'models.setLimits',
  'serving.pause',
  'serving.resume',
  'settings.get',
  'settings.save',
  'settings.checkKey',
  'requests.list',
  'requests.text',
  'usage.report',
  'usage.exportCsv',
  'earnings.overview',
  'earnings.setElectricity',
  'demand.list',
  'demand.pull',
  'demand.serve',
  'engines.rescan',
  'engines.addEndpoint',
  'gpu.history',
  'gpu.processes',
  'logs.list',
  'logs.bundle',
  'gateway.keys.list',
  'gateway.keys.create',
  'gateway.keys.revoke',
  'onboarding.complete',
  'prices.list',
  'prices.set',
  'notices.list',
  'providerStatus.refresh',
  'alerts.list',
  'alerts.test',
  'models.try',
  'update.check',
  'update.download',
  'update.install',
  'app.info',
  'link.retry',
  'gpu.longHistory',
  'usage.model',
  'fleet.list',
  'fleet.add',
  'fleet.remove',
  'fleet.openConsole',
  'fleet.usage',
  'fleet.tokens.list',
  'fleet.tokens.create',
  'fleet.tokens.revoke',
  'console.sessions',
  'console.signOut',
] as const;

export type ChannelName = (typeof INVOKE_CHANNELS)[number];

const SET: ReadonlySet<string> = new Set(INVOKE_CHANNELS);

export function isChannelName(x: unknown): x is ChannelName {
  return typeof x === 'string' && SET.has(x);
}
