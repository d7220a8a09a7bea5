// Alerts to a webhook URL the owner sets (headless rigs). The body is JSON with the text in both
// `content` (Discord) and `text` (Slack, ntfy's JSON form reads `message`, also set), plus the kind,
// title, node and time for anything else. One alert per kind per cooldown. The test alert is sent by
// the "send test alert" button itself (send(), which reports the outcome), never by handle().
// A call has a timeout and never blocks serving: it runs beside the agent, bounded in number.
import type { Alert, AlertKind, AlertTestResult } from '../../shared/alerts';
import type { Logger } from '../base/log';
import { httpUrlProblem } from '../http/url-problem';

export const DEFAULT_COOLDOWN_MINUTES = 10;
const MAX_IN_FLIGHT = 4;

/** An error message for a webhook URL, or undefined when it is fine ('' means "off"). */
export function webhookUrlProblem(raw: string): string | undefined {
  return httpUrlProblem(raw, {
    subject: 'The webhook URL',
    inside: 'the webhook URL',
    credentialsHint: 'use a token in its path or query instead',
    maxLength: 2048,
  });
}

export function webhookBody(alert: Alert, node: string): Record<string, unknown> {
  const line = `[${node}] ${alert.title}: ${alert.text}`;
  return { content: line, text: line, message: line, title: alert.title, kind: alert.kind, node, ts: new Date(alert.ts).toISOString(), id: alert.id };
}

export interface WebhookOptions {
  /** The URL now ('' or undefined: off). Read at each alert, so a saved setting applies at once. */
  url: () => string | undefined;
  cooldownMs: () => number;
  node: () => string;
  log: Logger;
  timeoutMs?: number;
  now?: () => number;
}

export class WebhookTransport {
  private readonly lastSent = new Map<AlertKind, number>();
  private inFlight = 0;

  constructor(private readonly o: WebhookOptions) {}

  /** For the alert list's 'alert' event: sends unless off, cooling down, or too many calls are pending. */
  handle(alert: Alert): void {
    const url = this.o.url();
    if (!url || alert.kind === 'test') return;
    const now = (this.o.now ?? Date.now)();
    const last = this.lastSent.get(alert.kind);
    if (last !== undefined && now - last < this.o.cooldownMs()) {
      this.o.log.debug(`alert ${alert.kind} not sent to the webhook: cooling down`);
      return;
    }
    this.lastSent.set(alert.kind, now);
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.o.log.warn(`alert ${alert.kind} not sent to the webhook: ${MAX_IN_FLIGHT} earlier calls are still waiting for it`);
      return;
    }
    void this.send(alert, url);
  }

  /** Sends now (the "send test alert" button uses it to report the outcome). */
  async send(alert: Alert, url = this.o.url()): Promise<AlertTestResult> {
    if (!url) return { webhook: 'off' };
    this.inFlight++;
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'swan-provider-alerts' },
        body: JSON.stringify(webhookBody(alert, this.o.node())),
        redirect: 'error',
        signal: AbortSignal.timeout(this.o.timeoutMs ?? 5000),
      });
      await res.body?.cancel();
      if (!res.ok) {
        this.o.log.warn(`the alert webhook answered HTTP ${res.status} for ${alert.kind}; check the URL in Settings → Alerts`);
        return { webhook: 'failed', detail: `HTTP ${res.status}` };
      }
      return { webhook: 'sent', detail: `HTTP ${res.status}` };
    } catch (e) {
      const err = e as Error;
      const why =
        err.name === 'TimeoutError' ? `no answer within ${(this.o.timeoutMs ?? 5000) / 1000} s` : ((err.cause as Error | undefined)?.message ?? err.message);
      this.o.log.warn(`the alert webhook could not be reached for ${alert.kind}: ${why}`);
      return { webhook: 'failed', detail: why };
    } finally {
      this.inFlight--;
    }
  }
}
