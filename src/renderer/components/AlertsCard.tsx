// Settings → Alerts: where alerts go (desktop notifications, browser notifications, a webhook for
// headless rigs), the cooldown per kind, a test alert, and the newest alerts.
import { useEffect, useState } from 'react';
import type { Alert, AlertKind, AlertTestResult } from '../../shared/alerts';
import { getBridge } from '../bridge';
import { askBrowserPermission, browserPermission, type BrowserPermission } from '../lib/browser-alerts';
import { fmtDateTime } from '../lib/format';
import { useCall } from '../lib/use-call';
import { onAlert, setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText, TextField } from './Field';
import { Toggle } from './Toggle';

const KIND_LABEL: Record<AlertKind, string> = {
  link_down: 'Hub connection lost',
  key_refused: 'Key refused',
  engine_down: 'Engine down',
  auto_paused: 'Paused by itself',
  hub_notice: 'Hub notice',
  rig_unreachable: 'Rig unreachable',
  test: 'Test',
  engine_back: 'Engine back',
  model_withdrawn: 'Model withdrawn',
  model_back: 'Model back',
};

const TEST_RESULT: Record<AlertTestResult['webhook'], string> = {
  sent: 'Test alert sent to the webhook',
  failed: 'The webhook did not take the test alert',
  off: 'Test alert raised (no webhook set, so only notifications show it)',
};

function RecentAlerts() {
  const [alerts, setAlerts] = useState<Alert[]>([]);
  useEffect(() => {
    let live = true;
    getBridge()
      .invoke('alerts.list', {})
      .then((list) => live && setAlerts(list.slice(0, 10)))
      .catch(() => undefined);
    const off = onAlert((a) => setAlerts((cur) => [a, ...cur.filter((x) => x.id !== a.id)].slice(0, 10)));
    return () => {
      live = false;
      off();
    };
  }, []);
  if (alerts.length === 0) return <p className="muted small">No alerts yet.</p>;
  return (
    <ul className="plain-list small alert-list" data-testid="recent-alerts">
      {alerts.map((a) => (
        <li key={a.id} data-testid="recent-alert" data-kind={a.kind}>
          <span className="muted">{fmtDateTime(a.ts)}</span> · <strong>{KIND_LABEL[a.kind]}</strong>: {a.text}
        </li>
      ))}
    </ul>
  );
}

function BrowserNotifications() {
  const [permission, setPermission] = useState<BrowserPermission>(browserPermission());
  const [ask, state] = useCall(async () => setPermission(await askBrowserPermission()));
  if (permission === 'unsupported') return <p className="muted small">This browser shows no notifications; alerts stay on this page and in the webhook.</p>;
  if (permission === 'granted')
    return (
      <p className="muted small" data-testid="browser-notifications" data-permission="granted">
        This browser shows alerts as notifications while the console is open.
      </p>
    );
  if (permission === 'denied')
    return (
      <p className="muted small" data-testid="browser-notifications" data-permission="denied">
        Notifications are blocked for this page in the browser&apos;s site settings; allow them there to see alerts.
      </p>
    );
  return (
    <div data-testid="browser-notifications" data-permission="default">
      <button type="button" onClick={() => void ask()} disabled={state.pending} data-testid="browser-notifications-ask">
        Show alerts as browser notifications
      </button>
      <ErrorText error={state.error} />
    </div>
  );
}

/** Alerts by e-mail over SMTP: where to, through which server; the password is write-only. */
function EmailAlerts() {
  const settings = useStore((s) => s.settings);
  const [to, setTo] = useState<string | null>(null);
  const [server, setServer] = useState<string | null>(null);
  const [password, setPassword] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const [saveEmail, state] = useCall(async () => {
    setSaved(false);
    const r = await getBridge().invoke('settings.save', {
      patch: {
        alertEmailTo: (to ?? settings?.alertEmailTo ?? '').trim(),
        alertSmtpServer: (server ?? settings?.alertSmtpServer ?? '').trim(),
        ...(password ? { alertSmtpPassword: password } : {}),
      },
    });
    if (!r.ok) return setErrors(r.errors);
    setErrors({});
    setPassword('');
    setTo(null);
    setServer(null);
    setSaved(true);
    setSettings(await getBridge().invoke('settings.get', {}));
  });
  if (!settings) return null;
  return (
    <form
      className="alerts-form"
      noValidate
      data-testid="alerts-email"
      onSubmit={(e) => {
        e.preventDefault();
        void saveEmail();
      }}
    >
      <h3>E-mail</h3>
      <TextField
        label="Send alerts to"
        hint="One e-mail address; leave empty for none."
        error={errors.alertEmailTo}
        testId="field-alertEmailTo"
        inputTestId="input-alertEmailTo"
        type="email"
        value={to ?? settings.alertEmailTo}
        placeholder="me@example.com"
        onChange={setTo}
      />
      <TextField
        label="SMTP server"
        hint="smtp://user@mail.example.com:587 (STARTTLS) or smtps://user@mail.example.com:465; the user is usually your e-mail address (write @ as %40)."
        error={errors.alertSmtpServer}
        testId="field-alertSmtpServer"
        inputTestId="input-alertSmtpServer"
        value={server ?? settings.alertSmtpServer}
        placeholder="smtp://me%40example.com@mail.example.com:587"
        onChange={setServer}
      />
      <TextField
        label="SMTP password"
        hint={
          settings.alertSmtpPasswordSet ? 'A password is kept (never shown). Type a new one to replace it.' : 'Kept with the provider key, never shown again.'
        }
        testId="field-alertSmtpPassword"
        inputTestId="input-alertSmtpPassword"
        type="password"
        autoComplete="off"
        value={password}
        onChange={setPassword}
      />
      <div className="form-actions">
        <button type="submit" disabled={state.pending} data-testid="alerts-email-save">
          Save e-mail settings
        </button>
        {saved && (
          <span className="muted small" role="status" data-testid="alerts-email-saved">
            Saved. “Send test alert” sends one by e-mail too.
          </span>
        )}
      </div>
      <ErrorText error={state.error} />
    </form>
  );
}

export function AlertsCard() {
  const settings = useStore((s) => s.settings);
  const transport = getBridge().transport;
  const [url, setUrl] = useState<string | null>(null);
  const [cooldown, setCooldown] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [tested, setTested] = useState<AlertTestResult | null>(null);
  const save = async (patch: { alertWebhookUrl?: string; alertCooldownMinutes?: number; desktopNotifications?: boolean }): Promise<void> => {
    const r = await getBridge().invoke('settings.save', { patch });
    if (!r.ok) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    setSettings(await getBridge().invoke('settings.get', {}));
    setUrl(null);
    setCooldown(null);
  };
  const [saveHook, saveState] = useCall(async () => {
    const minutes = Number(cooldown ?? settings?.alertCooldownMinutes);
    if (!Number.isInteger(minutes)) {
      setErrors({ alertCooldownMinutes: 'Enter a whole number of minutes.' });
      return;
    }
    await save({ alertWebhookUrl: (url ?? settings?.alertWebhookUrl ?? '').trim(), alertCooldownMinutes: minutes });
  });
  const [toggleDesktop, toggleState] = useCall((v: boolean) => save({ desktopNotifications: v }));
  const [test, testState] = useCall(async () => setTested(await getBridge().invoke('alerts.test', {})));
  if (!settings) return null;
  const changed = (url !== null && url !== settings.alertWebhookUrl) || (cooldown !== null && cooldown !== String(settings.alertCooldownMinutes));
  return (
    <Card title="Alerts" testId="alerts-card">
      <p className="muted small">
        You are told when the hub connection drops, the hub refuses your key, an engine stops answering, serving pauses by itself, or the hub sends a notice.
      </p>
      {transport === 'ipc' ? (
        <Toggle
          checked={settings.desktopNotifications}
          disabled={toggleState.pending}
          onChange={(v) => void toggleDesktop(v)}
          label="Show alerts as desktop notifications"
          testId="input-desktopNotifications"
        />
      ) : (
        <BrowserNotifications />
      )}
      <form
        className="alerts-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void saveHook();
        }}
      >
        <TextField
          label="Webhook URL"
          hint="For a rig without a screen: alerts are posted as JSON with the text in “content” and “text” (Discord, Slack, ntfy and most chat webhooks read one of them). Leave empty for none."
          error={errors.alertWebhookUrl}
          testId="field-alertWebhookUrl"
          value={url ?? settings.alertWebhookUrl}
          placeholder="https://ntfy.sh/my-rig"
          onChange={setUrl}
          inputTestId="input-alertWebhookUrl"
        />
        <TextField
          label="Minutes between alerts of the same kind"
          error={errors.alertCooldownMinutes}
          testId="field-alertCooldownMinutes"
          inputMode="numeric"
          className="num-input"
          value={cooldown ?? String(settings.alertCooldownMinutes)}
          onChange={setCooldown}
          inputTestId="input-alertCooldownMinutes"
        />
        <div className="form-actions">
          <button type="submit" disabled={!changed || saveState.pending} data-testid="alerts-save">
            Save alert settings
          </button>
          <button type="button" onClick={() => void test()} disabled={testState.pending} data-testid="alerts-test">
            Send test alert
          </button>
        </div>
      </form>
      <ErrorText error={saveState.error ?? testState.error} />
      {tested && (
        <p className={tested.webhook === 'failed' ? 'error-text' : 'muted small'} role="status" data-testid="alerts-test-result" data-result={tested.webhook}>
          {TEST_RESULT[tested.webhook]}
          {tested.detail ? ` (${tested.detail})` : ''}.
        </p>
      )}
      {tested?.email && (
        <p className={tested.email === 'failed' ? 'error-text' : 'muted small'} role="status" data-testid="alerts-test-email" data-result={tested.email}>
          {tested.email === 'sent' ? 'The test e-mail was accepted by the mail server' : 'The test e-mail was not sent'}
          {tested.emailDetail ? ` (${tested.emailDetail})` : ''}.
        </p>
      )}
      <EmailAlerts />
      <h3>Recent alerts</h3>
      <RecentAlerts />
    </Card>
  );
}
