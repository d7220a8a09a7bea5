// The bridge as the desktop window sees it: the Agent, with the update channels answered here where
// electron-updater lives (core never imports electron) when the owner set a generic feed; the release
// channel (decision 0010) is the agent's. Arguments are validated with the same schemas.
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
  // The last check went to electron-updater (a generic feed): its download and install are answered here.
  let generic = false;
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
          const viaUpdater = await updater.check(settings.updateFeedUrl);
          generic = viaUpdater !== undefined;
          return viaUpdater ?? (await agent.invoke(channel, args));
        }
        case 'update.download':
          if (!generic) return agent.invoke(channel, args);
          parse(channel, args);
          return updater.download();
        case 'update.install': {
          if (!generic) {
            // The release channel: the agent verified the file and records the choice; "now" restarts into it.
            const view = await agent.invoke(channel, args);
            if ((parse(channel, args) as { when: string }).when === 'now') setImmediate(o.restartToInstall);
            return view;
          }
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
