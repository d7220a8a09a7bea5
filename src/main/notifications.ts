// Desktop notifications for alerts (src/core/alerts): each alert the agent raises shows as a system
// notification while the owner has them on (Settings → Alerts); clicking one opens the window.
// The alert list is the one source; this is one of its transports.
import { Notification } from 'electron';
import type { Alert } from '../shared/alerts';
import type { Logger } from '../core/base/log';

export interface DesktopNotifierOptions {
  alerts: { on(e: 'alert', cb: (a: Alert) => void): unknown; off(e: 'alert', cb: (a: Alert) => void): unknown };
  enabled: () => boolean;
  open: () => void;
  log: Logger;
}

/** Subscribes; returns the unsubscribe function. A platform without notifications is logged once. */
export function installDesktopNotifications(o: DesktopNotifierOptions): () => void {
  let told = false;
  // Kept referenced until closed, so a notification is not garbage-collected before it is clicked.
  const live = new Set<Notification>();
  const onAlert = (a: Alert): void => {
    if (!o.enabled()) return;
    if (!Notification.isSupported()) {
      if (!told) o.log.info('This desktop shows no notifications; alerts stay in the console and the log.');
      told = true;
      return;
    }
    const n = new Notification({ title: a.title, body: a.text, silent: a.kind === 'test' });
    live.add(n);
    n.on('click', () => o.open());
    n.on('close', () => live.delete(n));
    n.show();
  };
  o.alerts.on('alert', onAlert);
  return () => {
    o.alerts.off('alert', onAlert);
    live.clear();
  };
}
