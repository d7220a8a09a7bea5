// Settings: every field shows the agent's refusal right next to it; the key is write-only.
import { useEffect, useState } from 'react';
import type { OwnerConfirmation } from '../../shared/bridge-error';
import type { SettingsPatch } from '../../shared/bridge/schemas';
import type { SaveResult, SettingsView } from '../../shared/views/settings';
import { getBridge } from '../bridge';
import { AboutCard } from '../components/AboutCard';
import { AlertsCard } from '../components/AlertsCard';
import { ConsoleSessions } from '../components/ConsoleSessions';
import { Card } from '../components/Card';
import { ErrorText, Field, TextField } from '../components/Field';
import { KeyDestinationConfirm } from '../components/KeyDestinationConfirm';
import { unlessHeld } from '../bridge/approvals';
import { useApprovedCreate } from '../lib/use-approved-create';
import { CredentialList } from '../components/CredentialList';
import { IdentityRow } from '../components/IdentityRow';
import { NetworkChoice } from '../components/NetworkChoice';
import { PayoutCard } from '../components/PayoutCard';
import { NETWORKS } from '../../shared/networks';
import { Toggle, ToggleRow } from '../components/Toggle';
import { fmtDateTime } from '../lib/format';
import { applyTheme } from '../lib/theme';
import { useCall, useFetch } from '../lib/use-call';
import { notify, setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { BusyButton } from '../components/BusyButton';

/** Fields that show their own error next to them; any other error goes into the summary. */
const FIELDS_WITH_ERRORS = new Set([
  'hubUrl',
  'serviceUrl',
  'providerKey',
  'nodeName',
  'gatewayEnabled',
  'gatewayListen',
  'theme',
  'startAtLogin',
  'closeToTray',
  'retentionDays',
]);

type Draft = Omit<SettingsView, 'keySet' | 'keyStorage'> & { providerKey: string; retentionDaysText: string };

function toDraft(s: SettingsView): Draft {
  return { ...s, providerKey: '', retentionDaysText: String(s.retentionDays) };
}

/** Only what changed is sent; the key only when something was typed. */
function diff(s: SettingsView, d: Draft): { patch: SettingsPatch; local: Record<string, string> } {
  const patch: SettingsPatch = {};
  const local: Record<string, string> = {};
  const keys = ['hubUrl', 'serviceUrl', 'nodeName', 'gatewayEnabled', 'gatewayListen', 'startAtLogin', 'closeToTray', 'theme', 'autoPauseOnGpuBusy'] as const;
  for (const k of keys) if (d[k] !== s[k]) (patch as Record<string, unknown>)[k] = d[k];
  if (d.providerKey.trim()) patch.providerKey = d.providerKey.trim();
  const days = Number(d.retentionDaysText);
  if (d.retentionDaysText.trim() === '' || !Number.isInteger(days)) local.retentionDays = 'Enter a whole number of days.';
  else if (days !== s.retentionDays) patch.retentionDays = days;
  return { patch, local };
}

const KEY_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

const KEY_STORAGE: Record<SettingsView['keyStorage'], string> = {
  keychain: 'kept in the system keychain',
  file: 'kept in a private file in the agent folder (no system keychain here)',
  config: 'kept in config.toml',
  env: 'taken from INFERENCE_API_KEY',
  none: 'nowhere',
};

function GatewayKeys() {
  const list = useFetch(() => getBridge().invoke('gateway.keys.list', {}), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const gateway = useStore((s) => s.snapshot?.gateway);
  const [copied, setCopied] = useState(false);
  const {
    create,
    state: createState,
    confirm,
  } = useApprovedCreate(
    async (n, grant) => {
      // Said here in plain words rather than as the agent's argument check.
      if (!KEY_NAME.test(n)) throw new Error('A key name uses only letters, digits, dots, dashes or underscores (1 to 64 characters), for example my-app.');
      return getBridge().invoke('gateway.keys.create', { name: n, ...(grant ? { grant } : {}) });
    },
    (r) => {
      setCreated(r);
      setCopied(false);
      setName('');
      list.reload();
    },
  );
  const [revoke, revokeState] = useCall(async (n: string) => {
    await getBridge().invoke('gateway.keys.revoke', { name: n });
    // The "copy it now" banner of a key that no longer exists goes with it.
    setCreated((c) => (c?.name === n ? null : c));
    list.reload();
  });
  const [copyKey, copyState] = useCall(async () => {
    if (!created) return;
    await navigator.clipboard.writeText(created.key).catch(() => {
      throw new Error('This page has no clipboard access: select the key and copy it by hand.');
    });
    setCopied(true);
  });
  return (
    <div className="gateway-keys" data-testid="gateway-keys">
      <p className="muted small">Your own apps use these keys to reach your engines through the local gateway.</p>
      {gateway && !gateway.enabled && (
        <p className="banner banner-warn" data-testid="gateway-off-hint">
          The local gateway is off, so these keys do nothing yet: turn it on under Local gateway and save.
        </p>
      )}
      {list.error && <ErrorText error={list.error} />}
      <CredentialList
        items={list.data}
        empty="No keys yet."
        testId="gateway-key"
        detail={(k) => `created ${fmtDateTime(k.createdAt)}${k.lastUsedAt ? ` · last used ${fmtDateTime(k.lastUsedAt)}` : ''}`}
        onRevoke={(n) => void revoke(n)}
        revoking={revokeState.pending}
        revokeLabel={(n) => `Revoke key ${n}`}
      />
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void create(name.trim());
        }}
      >
        <TextField
          label="New key name"
          hint="Letters, digits, dot, dash or underscore."
          error={createState.error}
          testId="gateway-key-name-field"
          value={name}
          onChange={setName}
          inputTestId="gateway-key-name"
        />
        <div className="form-actions">
          <button type="submit" disabled={!name.trim() || createState.pending} data-testid="gateway-key-create">
            Create key
          </button>
        </div>
      </form>
      {confirm}
      <ErrorText error={revokeState.error} />
      {created && (
        <div className="banner banner-info key-banner" role="status" data-testid="gateway-key-created">
          <span>
            Key <span className="mono">{created.name}</span>:{' '}
            <code className="mono selectable" data-testid="gateway-key-value">
              {created.key}
            </code>
          </span>
          <button type="button" className="small-button" onClick={() => void copyKey()} data-testid="gateway-key-copy">
            {copied ? 'Copied' : 'Copy'}
          </button>
          <span>Copy it now: it is not shown again.</span>
          <ErrorText error={copyState.error} />
        </div>
      )}
    </div>
  );
}

export function Settings() {
  const settings = useStore((s) => s.settings);
  const transport = getBridge().transport;
  const [draft, setDraft] = useState<Draft | null>(settings ? toDraft(settings) : null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [saved, setSaved] = useState(false);
  const [destination, setDestination] = useState<OwnerConfirmation | null>(null);
  const afterSave = async (r: SaveResult) => {
    setDestination(null);
    if (!r.ok) {
      setErrors(r.errors);
      return;
    }
    setErrors({});
    setSaved(true);
    const fresh = await getBridge().invoke('settings.get', {});
    setSettings(fresh);
    setDraft(toDraft(fresh));
  };
  useEffect(() => {
    if (settings && !draft) setDraft(toDraft(settings));
  }, [settings, draft]);
  const [save, saveState] = useCall(async () => {
    if (!settings || !draft) return;
    const { patch, local } = diff(settings, draft);
    setSaved(false);
    if (Object.keys(local).length) {
      setErrors(local);
      return;
    }
    if (Object.keys(patch).length === 0) {
      setErrors({});
      notify('info', 'Nothing changed.');
      return;
    }
    const { held, value: r } = await unlessHeld(getBridge().invoke('settings.save', { patch }));
    if (held) {
      // The key would go somewhere new: the agent holds the change until the owner approves it.
      setErrors({});
      setDestination(held);
      return;
    }
    await afterSave(r);
  });
  if (!settings || !draft) return <p className="muted">Loading settings…</p>;
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => {
    setDraft({ ...draft, [k]: v });
    setSaved(false);
  };
  const desktopOnly = transport === 'websocket' ? 'Applies to the desktop app.' : undefined;
  // A headless rig starts at boot as a service: say how where the owner looks for it.
  const startAtLoginHint =
    transport === 'websocket'
      ? 'Applies to the desktop app. On a headless Linux rig, run `swan-provider service install` where the agent runs: it starts at boot (it enables lingering, or says how).'
      : undefined;
  return (
    <div className="page" data-testid="page-settings">
      <h1>Settings</h1>
      <form
        className="settings-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <Card title="Swan network">
          <NetworkChoice hubUrl={draft.hubUrl} onPick={(n) => setDraft({ ...draft, ...n })} />
          <TextField
            label="Hub WebSocket URL"
            hint={`Where the agent registers, for example ${NETWORKS.mainnet.hubUrl} (mainnet; the agent adds /ws itself).`}
            error={errors.hubUrl}
            testId="field-hubUrl"
            value={draft.hubUrl}
            onChange={(v) => set('hubUrl', v)}
            inputTestId="input-hubUrl"
          />
          <TextField
            label="Service URL"
            hint={`The hub's API, where your key is checked before connecting (mainnet: ${NETWORKS.mainnet.serviceUrl}).`}
            error={errors.serviceUrl}
            testId="field-serviceUrl"
            value={draft.serviceUrl}
            onChange={(v) => set('serviceUrl', v)}
            inputTestId="input-serviceUrl"
          />
          <TextField
            label="Provider key"
            hint={
              settings.keySet
                ? `A key is set (${KEY_STORAGE[settings.keyStorage]}). Type a new one to replace it; the key is never shown.`
                : 'No key set yet. Paste the provider key from your Swan Inference dashboard.'
            }
            error={errors.providerKey}
            testId="field-providerKey"
            type="password"
            autoComplete="off"
            value={draft.providerKey}
            placeholder={settings.keySet ? '•••••••• (unchanged)' : 'sk-prov-…'}
            onChange={(v) => set('providerKey', v)}
            inputTestId="input-providerKey"
          />
          {destination && (
            <KeyDestinationConfirm
              confirmation={destination}
              onDone={(v) => (v.status === 'approved' ? void afterSave({ ok: true }) : undefined)}
              onCancel={() => setDestination(null)}
            />
          )}
          <TextField
            label="Node name"
            hint="How this machine appears on the network."
            error={errors.nodeName}
            testId="field-nodeName"
            value={draft.nodeName}
            onChange={(v) => set('nodeName', v)}
            inputTestId="input-nodeName"
          />
          <IdentityRow />
        </Card>
        <Card title="Local gateway">
          <ToggleRow
            checked={draft.gatewayEnabled}
            onChange={(v) => set('gatewayEnabled', v)}
            label="Let my own apps use my engines through the local gateway"
            testId="input-gatewayEnabled"
            error={errors.gatewayEnabled}
          />
          <TextField
            label="Gateway address"
            hint="host:port; 127.0.0.1 keeps it on this machine."
            error={errors.gatewayListen}
            testId="field-gatewayListen"
            value={draft.gatewayListen}
            onChange={(v) => set('gatewayListen', v)}
            inputTestId="input-gatewayListen"
          />
        </Card>
        <Card title="App">
          <Field label="Theme" error={errors.theme} testId="field-theme">
            {(id, d) => (
              <select
                id={id}
                aria-describedby={d}
                value={draft.theme}
                onChange={(e) => {
                  const t = e.target.value as Draft['theme'];
                  set('theme', t);
                  applyTheme(t);
                }}
                data-testid="input-theme"
              >
                <option value="system">Follow the system</option>
                <option value="light">Light</option>
                <option value="dark">Dark</option>
              </select>
            )}
          </Field>
          <ToggleRow
            checked={draft.startAtLogin}
            onChange={(v) => set('startAtLogin', v)}
            label="Start at login"
            testId="input-startAtLogin"
            hint={startAtLoginHint}
            error={errors.startAtLogin}
          />
          <ToggleRow
            checked={draft.closeToTray}
            onChange={(v) => set('closeToTray', v)}
            label="Keep serving in the tray when the window is closed"
            testId="input-closeToTray"
            hint={desktopOnly}
            hintTestId="tray-desktop-only"
            error={errors.closeToTray}
          />
          <Toggle
            checked={draft.autoPauseOnGpuBusy}
            onChange={(v) => set('autoPauseOnGpuBusy', v)}
            label="Pause while another program uses the GPU"
            testId="input-autoPauseOnGpuBusy"
          />
          <TextField
            label="Keep request history (days)"
            error={errors.retentionDays}
            testId="field-retentionDays"
            inputMode="numeric"
            className="num-input"
            value={draft.retentionDaysText}
            onChange={(v) => set('retentionDaysText', v)}
            inputTestId="input-retentionDays"
          />
        </Card>
        <div className="form-actions sticky-actions">
          <BusyButton type="submit" className="primary" data-testid="settings-save" busy={saveState.pending} busyLabel="Saving…">
            Save settings
          </BusyButton>
          <button
            type="button"
            onClick={() => {
              setDraft(toDraft(settings));
              setErrors({});
              applyTheme(settings.theme);
            }}
          >
            Discard changes
          </button>
          {saved && (
            <span className="muted" role="status" data-testid="settings-saved">
              Saved.
            </span>
          )}
          {Object.keys(errors).length > 0 && (
            <span className="error-text" role="alert" data-testid="settings-invalid">
              Not saved: fix the fields marked in red.
              {Object.entries(errors)
                .filter(([k]) => !FIELDS_WITH_ERRORS.has(k))
                .map(([k, v]) => ` ${k}: ${v}`)
                .join('')}
            </span>
          )}
          <ErrorText error={saveState.error} />
        </div>
      </form>
      <PayoutCard />
      <Card title="Gateway keys">
        <GatewayKeys />
      </Card>
      <ConsoleSessions />
      <AlertsCard />
      <AboutCard />
    </div>
  );
}
