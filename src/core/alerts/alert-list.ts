// The one alert list: sources raise alerts here; transports (webhook, desktop notifications, the
// console) subscribe to 'alert'. Keeps the newest alerts for the console to list.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Alert, AlertKind } from '../../shared/alerts';

const KEEP = 100;

export class AlertList extends EventEmitter<{ alert: [Alert] }> {
  private readonly recent: Alert[] = [];

  raise(kind: AlertKind, title: string, text: string, now = Date.now()): Alert {
    const alert: Alert = { id: crypto.randomUUID(), kind, ts: now, title, text: text.slice(0, 1000) };
    this.recent.push(alert);
    if (this.recent.length > KEEP) this.recent.shift();
    this.emit('alert', alert);
    return alert;
  }

  /** Newest first. */
  list(): Alert[] {
    return this.recent.slice().reverse();
  }
}
