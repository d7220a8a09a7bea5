// The console's own verbs: the snapshot, the request list and a request's text, the logs and the support
// bundle, alerts, updates, what the app is; browser sessions are the console server's.
import type { AgentSnapshot } from '../../shared/views/snapshot';
import type { SettingsView } from '../../shared/views/settings';
import { BridgeError } from '../../shared/bridge-error';
import type { AlertList } from '../alerts/alert-list';
import type { WebhookTransport } from '../alerts/webhook';
import type { EmailTransport } from '../alerts/email';
import type { AgentLog } from '../base/log';
import type { RequestBook } from '../inference/requests';
import type { Updates } from '../update/updates';
import { appInfo } from './console-extras';
import type { Verbs } from './verbs';

type ConsoleChannel =
  | 'snapshot.get'
  | 'requests.list'
  | 'requests.text'
  | 'logs.list'
  | 'logs.bundle'
  | 'alerts.list'
  | 'alerts.test'
  | 'update.check'
  | 'update.download'
  | 'update.install'
  | 'update.status'
  | 'app.info'
  | 'console.sessions'
  | 'console.signOut';

export interface ConsoleVerbDeps {
  mode: 'desktop' | 'headless';
  log: AgentLog;
  book: RequestBook;
  alerts: AlertList;
  webhook: WebhookTransport;
  email: Pick<EmailTransport, 'send'>;
  snapshot: () => AgentSnapshot;
  settingsView: () => SettingsView;
  /** Updates on the release channel (the owner feature's). */
  updates: Updates;
  /** A request's text, read after the bridge got every delta the book holds (bridge.ts). */
  requestText: (id: string) => string;
}

export function consoleVerbs(d: ConsoleVerbDeps): Verbs<ConsoleChannel> {
  return {
    'snapshot.get': () => d.snapshot(),
    'requests.list': ({ limit }) => d.book.list(limit ?? 500),
    'requests.text': ({ id }) => d.requestText(id),
    'logs.list': ({ level, limit }) => d.log.entries(limit ?? 500, level ?? 'debug'),
    'logs.bundle': () => supportBundle(d),
    'alerts.list': () => d.alerts.list(),
    'alerts.test': async () => {
      const alert = d.alerts.raise('test', 'Test alert', 'This is a test alert from Swan Provider Console. If you see it, alerts reach you.');
      const [webhook, email] = await Promise.all([d.webhook.send(alert), d.email.send(alert)]);
      // No e-mail set: the answer is the webhook's alone, as before e-mail alerts existed.
      if (email.email === 'off') return webhook;
      return { ...webhook, email: email.email, ...(email.detail ? { emailDetail: email.detail } : {}) };
    },
    'update.check': () => d.updates.check(),
    'update.status': () => d.updates.status() ?? null,
    // On the release channel (decision 0010): downloaded and verified here, held while a request is in flight.
    // A generic feed on the desktop is src/main/updater.ts's (electron-updater), answered there.
    'update.download': () => d.updates.startDownload(),
    'update.install': ({ when }) => {
      // The desktop app installs what it verified (after the agent stops: src/core/update/install.ts).
      if (d.mode === 'desktop') return d.updates.markInstall(when);
      const dl = d.updates.download();
      if (dl?.state === 'held')
        throw new BridgeError(
          'not_ready',
          `Version ${dl.version} waits for the ${dl.inFlight ?? 'running'} request(s) in flight to finish; it is ready once the last one has.`,
        );
      if (dl?.state !== 'ready') throw new BridgeError('not_ready', 'Download the new version first; nothing verified is waiting to be installed.');
      // The agent never installs or restarts itself: the owner runs the one command, at a moment they choose.
      throw new BridgeError(
        'not_supported',
        dl.command
          ? `The agent does not install itself. In a terminal, run: ${dl.command} — then restart the agent.`
          : `The app does not install this file itself yet. Quit the app, then install ${dl.file} (version ${dl.version}, verified) as you installed the app.`,
      );
    },
    'app.info': () => appInfo(d.snapshot().version, d.mode),
    // Browser sessions live in the console server, which answers these itself; the desktop app has none.
    'console.sessions': () => [],
    'console.signOut': () => ({ ended: 0 }),
  };
}

function supportBundle(d: ConsoleVerbDeps): string {
  const snap = d.snapshot();
  const settings = d.settingsView();
  const bundle = {
    generatedAt: new Date().toISOString(),
    version: snap.version,
    platform: `${process.platform} ${process.arch} node ${process.version}`,
    link: snap.link,
    pause: snap.pause,
    gpu: snap.gpu,
    engines: snap.engines,
    models: snap.models.map((m) => ({ id: m.id, enabled: m.enabled, health: m.health, endpoints: m.endpoints.map((e) => `${e.url} ${e.health}`) })),
    // A webhook URL often carries its own token (Discord, Slack): the bundle says only whether one is set.
    settings: { ...settings, alertWebhookUrl: settings.alertWebhookUrl ? '(set, not shown)' : '' },
    logs: d.log.entries(500),
  };
  // Last pass over everything: configured secret values and secret-shaped text (URLs with user:pass@).
  return d.log.redactText(JSON.stringify(bundle, null, 2));
}
