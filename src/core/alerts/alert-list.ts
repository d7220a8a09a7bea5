// The one alert list: sources raise alerts here; transports (webhook, desktop notifications, the
// console) subscribe to 'alert'. Keeps the newest alerts for the console to list.
import crypto from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Alert, AlertKind } from '../../shared/alerts';
import { Ring } from '../../shared/ring';

const KEEP = 100;

export class AlertList extends EventEmitter<{ alert: [Alert] }> {
  private readonly recent = new Ring<Alert>(KEEP);

  /**
   * `redact`: what the log does to a line (the configured secrets and secret-shaped values). An alert goes
   * further than the log (the webhook, the console, fleet-token holders), so it is redacted as a log line is:
   * a hub that echoes the provider key in a notice must not have it served as-is.
   */
  constructor(private readonly redact: (text: string) => string = (t) => t) {
    super();
  }

  raise(kind: AlertKind, title: string, text: string, now = Date.now()): Alert {
    const alert: Alert = { id: crypto.randomUUID(), kind, ts: now, title: this.redact(title), text: this.redact(text).slice(0, 1000) };
    this.recent.push(alert);
    this.emit('alert', alert);
    return alert;
  }

  /** Newest first. */
  list(): Alert[] {
    return this.recent.toArray().reverse();
  }
}
