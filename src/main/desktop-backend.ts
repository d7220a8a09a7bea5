// The bridge as the desktop window sees it: the Agent, with the update channels answered here where
// electron-updater lives (core never imports electron). Arguments are validated with the same schemas.
import { BridgeError } from '../shared/bridge-error';
import type { BridgeBackend } from '../shared/bridge/transport';
import { invokeSchemas } from '../shared/bridge/schemas';
import type { BridgeEvent } from '../shared/bridge/events';
import type { SettingsView } from '../shared/views/settings';
import { formatIssues } from '../shared/zod-issues';
import type { DesktopUpdater } from './updater';

export interface DesktopBackendOptions {
  agent: BridgeBackend;
  updater: DesktopUpdater;
  /** Restart into the downloaded version (main stops the agent first). */
  restartToInstall: () => void;
}

export function desktopBackend(o: DesktopBackendOptions): BridgeBackend {
  const { agent, updater } = o;
  const parse = (channel: 'update.check' | 'update.download' | 'update.install', args: unknown): unknown => {
    const parsed = invokeSchemas[channel].safeParse(args ?? {});
    if (!parsed.success) throw new BridgeError('invalid_args', `Invalid arguments for ${channel}: ${formatIssues(parsed.error, { root: 'arguments' })}`);
    return parsed.data;
  };
  return {
    async invoke(channel: string, args: unknown): Promise<unknown> {
      switch (channel) {
        case 'update.check': {
          parse(channel, args);
          const settings = (await agent.invoke('settings.get', {})) as SettingsView;
          return (await updater.check(settings.updateFeedUrl)) ?? (await agent.invoke(channel, args));
        }
        case 'update.download':
          parse(channel, args);
          return updater.download();
        case 'update.install': {
          const { when } = parse(channel, args) as { when: 'now' | 'on-quit' };
          const view = updater.markInstall(when);
          if (when === 'now') setImmediate(o.restartToInstall); // after this reply has gone out
          return view;
        }
        default:
          return agent.invoke(channel, args);
      }
    },
    subscribe(cb: (event: BridgeEvent) => void): () => void {
      const offAgent = agent.subscribe(cb);
      const offUpdates = updater.subscribe((download) => cb({ type: 'update.download', download }));
      return () => {
        offAgent();
        offUpdates();
      };
    },
  };
}
