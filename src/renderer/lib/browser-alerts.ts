// Browser notifications for alerts in the console (the desktop app shows its own from the main
// process). Permission is asked once, from a button the owner presses; nothing is asked on load.
import type { Alert } from '../../shared/alerts';
import { onAlert } from '../store/actions';

export type BrowserPermission = 'granted' | 'denied' | 'default' | 'unsupported';

export function browserPermission(): BrowserPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export async function askBrowserPermission(): Promise<BrowserPermission> {
  if (typeof Notification === 'undefined') return 'unsupported';
  return await Notification.requestPermission();
}

function show(a: Alert): void {
  if (browserPermission() !== 'granted') return;
  // One notification per kind on screen: a new one replaces the last of its kind.
  new Notification(a.title, { body: a.text, tag: `swan-${a.kind}` });
}

/** Starts showing alerts as browser notifications (only does anything once permission is granted). */
export function startBrowserAlerts(transport: 'ipc' | 'websocket'): () => void {
  if (transport !== 'websocket') return () => undefined;
  return onAlert(show);
}
