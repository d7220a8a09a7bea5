// Alerts by e-mail over SMTP (nodemailer), as the Go provider's alert monitor sends them: for a rig nobody
// watches, where a chat webhook is not what the owner reads. The server is `smtp://user@host:port` (STARTTLS
// when the server offers it, required off loopback) or `smtps://user@host:465` (TLS from the start); the
// password is kept apart in the secret store, never in the URL or the settings file. One e-mail per alert kind
// per cooldown, bounded in number, never blocking serving; the test alert goes through send().
import nodemailer from 'nodemailer';
import type { Alert, AlertKind } from '../../shared/alerts';
import type { Logger } from '../base/log';
import { isLoopbackHost } from '../http/loopback';

const MAX_IN_FLIGHT = 2;
export const SMTP_PASSWORD_SECRET = 'alertSmtpPassword';

export type EmailResult = { email: 'sent'; detail?: string } | { email: 'failed'; detail: string } | { email: 'off' };

/** An error message for the SMTP server field, or undefined when it is fine ('' means "off"). */
export function smtpServerProblem(raw: string): string | undefined {
  if (raw === '') return undefined;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'Use smtp://user@mail.example.com:587 (or smtps://…:465 for TLS from the start).';
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') return 'The SMTP server starts with smtp:// or smtps://, for example smtp://me@mail.example.com:587.';
  if (!u.hostname) return 'Name the mail server, for example smtp://me@mail.example.com:587.';
  if (u.password) return 'Leave the password out of the address: type it in the SMTP password field, which keeps it apart.';
  if (raw.length > 2048) return 'The SMTP server address is too long.';
  return undefined;
}

const EMAIL = /^[^\s@<>()",;]{1,64}@[^\s@<>()",;]{1,253}$/;

export function emailProblem(raw: string): string | undefined {
  return raw === '' || EMAIL.test(raw) ? undefined : 'Type one e-mail address, for example me@example.com.';
}

export interface EmailOptions {
  /** The address alerts go to ('' or undefined: off). Read at each alert, so a saved setting applies at once. */
  to: () => string | undefined;
  /** smtp://user@host:port or smtps://… */
  server: () => string | undefined;
  password: () => string | undefined;
  cooldownMs: () => number;
  node: () => string;
  log: Logger;
  timeoutMs?: number;
  now?: () => number;
}

export function emailMessage(alert: Alert, node: string): { subject: string; text: string } {
  return {
    subject: `[${node}] ${alert.title}`,
    text: `${alert.text}\n\nNode: ${node}\nAlert: ${alert.kind}\nTime: ${new Date(alert.ts).toISOString()}\n\n— Swan Provider Console`,
  };
}

export class EmailTransport {
  private readonly lastSent = new Map<AlertKind, number>();
  private inFlight = 0;

  constructor(private readonly o: EmailOptions) {}

  /** For the alert list's 'alert' event: sends unless off, cooling down, or too many are pending. */
  handle(alert: Alert): void {
    if (!this.o.to() || !this.o.server() || alert.kind === 'test') return;
    const now = (this.o.now ?? Date.now)();
    const last = this.lastSent.get(alert.kind);
    if (last !== undefined && now - last < this.o.cooldownMs()) {
      this.o.log.debug(`alert ${alert.kind} not e-mailed: cooling down`);
      return;
    }
    this.lastSent.set(alert.kind, now);
    if (this.inFlight >= MAX_IN_FLIGHT) {
      this.o.log.warn(`alert ${alert.kind} not e-mailed: ${MAX_IN_FLIGHT} earlier e-mails are still being sent`, { code: 'alert_email_busy' });
      return;
    }
    void this.send(alert);
  }

  async send(alert: Alert): Promise<EmailResult> {
    const to = this.o.to();
    const server = this.o.server();
    if (!to || !server) return { email: 'off' };
    let u: URL;
    try {
      u = new URL(server);
    } catch {
      return { email: 'failed', detail: 'the SMTP server address is not valid' };
    }
    const timeout = this.o.timeoutMs ?? 15_000;
    const user = decodeURIComponent(u.username);
    const password = this.o.password();
    const secure = u.protocol === 'smtps:';
    const transport = nodemailer.createTransport({
      host: u.hostname,
      port: Number(u.port) || (secure ? 465 : 587),
      secure,
      // Off this machine the password and the alert never cross the network in the clear.
      requireTLS: !secure && !isLoopbackHost(u.hostname),
      ...(user ? { auth: { user, pass: password ?? '' } } : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
    this.inFlight++;
    try {
      const info = await transport.sendMail({
        from: user.includes('@') ? user : `Swan Provider <swan-provider@${u.hostname}>`,
        to,
        ...emailMessage(alert, this.o.node()),
      });
      return { email: 'sent', detail: String(info.response ?? '').slice(0, 200) };
    } catch (e) {
      const err = e as Error & { code?: string; responseCode?: number };
      const why = err.responseCode
        ? `the mail server answered ${err.responseCode}`
        : err.code === 'ETIMEDOUT'
          ? `no answer within ${timeout / 1000} s`
          : err.code === 'EAUTH'
            ? 'the mail server refused the user or password'
            : `the mail server could not be reached (${err.code ?? 'error'})`;
      this.o.log.warn(`the alert e-mail for ${alert.kind} was not sent: ${why}; check Settings → Alerts`, { code: 'alert_email_failed' });
      return { email: 'failed', detail: why };
    } finally {
      this.inFlight--;
      transport.close();
    }
  }
}
