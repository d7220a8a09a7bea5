// Alerts by e-mail through a real Agent and a real SMTP server (smtp-server on 127.0.0.1, port 0): the SMTP
// settings saved from the console (the password write-only, in the secret store, never in settings.json or
// the settings view), the test alert delivered with the user and password, a real alert e-mailed once per
// cooldown, and a refused login reported with its code in the log.
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertTestResult } from '../../../src/shared/alerts';
import type { SaveResult, SettingsView } from '../../../src/shared/views/settings';
import { startStack, until, type Stack } from '../../support/stack';

interface Mail {
  from: string;
  to: string[];
  data: string;
  user?: string;
}

let smtp: SMTPServer;
let port: number;
const mails: Mail[] = [];
let stack: Stack;
const PASSWORD = 'correct-horse-battery-staple';

beforeEach(async () => {
  mails.length = 0;
  smtp = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: false,
    onAuth(auth, _session, cb) {
      if (auth.username === 'rig@example.com' && auth.password === PASSWORD) cb(null, { user: auth.username });
      else cb(new Error('Invalid username or password'));
    },
    onData(stream, session, cb) {
      const parts: Buffer[] = [];
      stream.on('data', (c: Buffer) => parts.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(parts).toString('utf8'),
          user: session.user as string | undefined,
        });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  port = (smtp.server.address() as AddressInfo).port;
  stack = await startStack({ hub: false });
});
afterEach(async () => {
  await stack?.close();
  await new Promise<void>((r) => smtp.close(r));
});

const invoke = <T>(channel: string, args: unknown): Promise<T> => stack.agent.invoke(channel, args) as Promise<T>;

describe('alerts by e-mail', () => {
  it('saves the SMTP settings with the password kept apart, and the test alert arrives', async () => {
    const saved = await invoke<SaveResult>('settings.save', {
      patch: { alertEmailTo: 'owner@example.com', alertSmtpServer: `smtp://rig%40example.com@127.0.0.1:${port}`, alertSmtpPassword: PASSWORD },
    });
    expect(saved).toMatchObject({ ok: true });
    const view = await invoke<SettingsView>('settings.get', {});
    expect(view).toMatchObject({ alertEmailTo: 'owner@example.com', alertSmtpPasswordSet: true });
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
    expect(fs.readFileSync(path.join(stack.home, 'settings.json'), 'utf8')).not.toContain(PASSWORD);

    const r = await invoke<AlertTestResult>('alerts.test', {});
    expect(r.email).toBe('sent');
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatchObject({ from: 'rig@example.com', to: ['owner@example.com'], user: 'rig@example.com' });
    expect(mails[0]!.data).toContain('Test alert');
  });

  it('e-mails a raised alert once per cooldown', async () => {
    await invoke('settings.save', {
      patch: { alertEmailTo: 'owner@example.com', alertSmtpServer: `smtp://rig%40example.com@127.0.0.1:${port}`, alertSmtpPassword: PASSWORD },
    });
    stack.agent.alerts.raise('engine_down', 'Engine down', 'The engine at http://127.0.0.1:1 stopped answering.');
    await until(() => mails.length === 1, 'the alert e-mailed');
    stack.agent.alerts.raise('engine_down', 'Engine down', 'again');
    expect((await invoke<AlertTestResult>('alerts.test', {})).email).toBe('sent');
    expect(mails.map((m) => /Subject: (.*)/.exec(m.data)?.[1])).toEqual([expect.stringContaining('Engine down'), expect.stringContaining('Test alert')]);
  });

  it('refuses an address with the password in it, and says when the login is refused', async () => {
    const bad = await invoke<SaveResult>('settings.save', { patch: { alertSmtpServer: `smtp://rig:${PASSWORD}@127.0.0.1:${port}` } });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors.alertSmtpServer).toContain('password');
    await invoke('settings.save', {
      patch: { alertEmailTo: 'owner@example.com', alertSmtpServer: `smtp://rig%40example.com@127.0.0.1:${port}`, alertSmtpPassword: 'wrong' },
    });
    const r = await invoke<AlertTestResult>('alerts.test', {});
    expect(r).toMatchObject({ email: 'failed' });
    expect(mails).toHaveLength(0);
  });
});
