// Onboarding step 1: which Swan Inference network this machine serves (mainnet, testnet, or a custom hub
// such as the local dev hub), with the addresses each choice means shown in full. With no provider key
// saved the choice is saved at once. With a key saved, moving it to a host that has not had it needs the
// owner: the key typed again here, or an approval outside the console; both are offered in this step.
import { useEffect, useState } from 'react';
import type { OwnerConfirmation } from '../../../shared/bridge-error';
import type { SettingsPatch } from '../../../shared/bridge/schemas';
import { LOCAL_DEV_HUB, NETWORKS, networkOf, type NetworkAddresses, type NetworkName } from '../../../shared/networks';
import { getBridge } from '../../bridge';
import { unlessHeld } from '../../bridge/approvals';
import { customAddresses, networkLabel } from '../../lib/network';
import { useCall } from '../../lib/use-call';
import { setSettings, setSnapshot } from '../../store/actions';
import { useStore } from '../../store/store';
import { ErrorText, TextField } from '../Field';
import { KeyDestinationConfirm } from '../KeyDestinationConfirm';
import { StepActions } from './StepActions';
import { BusyButton } from '../BusyButton';

const CHOICES: Array<{ name: NetworkName; label: string; hint: string }> = [
  { name: 'mainnet', label: NETWORKS.mainnet.label, hint: 'The live network: real requests, real earnings.' },
  { name: 'testnet', label: NETWORKS.testnet.label, hint: 'The test network, for trying a setup first.' },
  { name: 'custom', label: 'Custom hub', hint: 'Your own hub, for example "swan-provider dev-hub" on this machine (simulated network and money).' },
];

const same = (a: string, b: string) => a.trim().replace(/\/+$/, '') === b.trim().replace(/\/+$/, '');
/** The API address a hub's WebSocket address implies (what an empty field means). */
const derivedService = (hub: string): string => customAddresses(hub, '').serviceUrl;

async function refresh(): Promise<void> {
  setSettings(await getBridge().invoke('settings.get', {}));
  setSnapshot(await getBridge().invoke('snapshot.get', {}));
}

export function NetworkStep({ onNext }: { onNext: () => void }) {
  const settings = useStore((s) => s.settings);
  const saved = settings ? networkOf(settings.hubUrl) : 'mainnet';
  const [choice, setChoice] = useState<NetworkName>(saved);
  const [hubUrl, setHubUrl] = useState(settings && saved === 'custom' ? settings.hubUrl : LOCAL_DEV_HUB.hubUrl);
  const [serviceUrl, setServiceUrl] = useState(settings && saved === 'custom' ? settings.serviceUrl : LOCAL_DEV_HUB.serviceUrl);
  // The API address follows the WebSocket address until the owner edits it: a prefilled port left behind
  // would check the key somewhere else than the hub typed.
  const [serviceEdited, setServiceEdited] = useState(false);
  const onHubUrl = (v: string): void => {
    setHubUrl(v);
    if (!serviceEdited) setServiceUrl(derivedService(v));
  };
  const onServiceUrl = (v: string): void => {
    setServiceUrl(v);
    setServiceEdited(true);
  };
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [warnings, setWarnings] = useState<Record<string, string> | null>(null);
  const [held, setHeld] = useState<{ target: NetworkAddresses; confirmation: OwnerConfirmation } | null>(null);
  const [retyped, setRetyped] = useState('');
  // Settings arrive after the first render: start from what is saved.
  useEffect(() => {
    if (!settings) return;
    const n = networkOf(settings.hubUrl);
    setChoice(n);
    if (n === 'custom') {
      setHubUrl(settings.hubUrl);
      setServiceUrl(settings.serviceUrl);
      setServiceEdited(!same(settings.serviceUrl, derivedService(settings.hubUrl)));
    }
  }, [settings?.hubUrl, settings?.serviceUrl]);

  const target = (): NetworkAddresses =>
    choice === 'custom' ? customAddresses(hubUrl, serviceUrl) : { hubUrl: NETWORKS[choice].hubUrl, serviceUrl: NETWORKS[choice].serviceUrl };
  const unchanged = (t: NetworkAddresses) => !!settings && same(t.hubUrl, settings.hubUrl) && same(t.serviceUrl || settings.serviceUrl, settings.serviceUrl);

  /** Saves; true when done (at once or with the key typed again), false when it waits for the owner or was refused. */
  const apply = async (t: NetworkAddresses, patch: SettingsPatch): Promise<boolean> => {
    const { held: waits, value: r } = await unlessHeld(getBridge().invoke('settings.save', { patch }));
    if (waits) {
      setHeld({ target: t, confirmation: waits });
      return false;
    }
    if (!r.ok) {
      setErrors(r.errors);
      return false;
    }
    setHeld(null);
    await refresh();
    if (r.warnings && Object.keys(r.warnings).length > 0) {
      // Saved, but said before going on: the next press continues.
      setWarnings(r.warnings);
      return false;
    }
    return true;
  };

  const [save, state] = useCall(async () => {
    setErrors({});
    const t = target();
    if (unchanged(t)) {
      onNext();
      return;
    }
    setWarnings(null);
    setHeld(null);
    if (await apply(t, { hubUrl: t.hubUrl, serviceUrl: t.serviceUrl })) onNext();
  });
  const [confirmWithKey, confirmState] = useCall(async () => {
    if (!held) return;
    const key = retyped.trim();
    if (!key) throw new Error('Type your provider key (sk-prov-…) to confirm.');
    if (await apply(held.target, { ...held.target, providerKey: key })) {
      setRetyped('');
      onNext();
    }
  });
  const pick = (n: NetworkName) => {
    setChoice(n);
    setErrors({});
    setWarnings(null);
    setHeld(null);
  };
  const otherErrors = Object.entries(errors).filter(([k]) => choice !== 'custom' || (k !== 'hubUrl' && k !== 'serviceUrl'));
  return (
    <section className="card onboarding-step" aria-labelledby="step-network-title" data-testid="onboarding-network">
      <h2 id="step-network-title">Which network?</h2>
      <p className="muted small">Where this machine takes requests from. You can change it later in Settings.</p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <fieldset className="network-picks">
          <legend className="sr-only">Network</legend>
          {CHOICES.map((c) => (
            <label key={c.name} className={`network-choice${choice === c.name ? ' is-chosen' : ''}`}>
              <input type="radio" name="network" value={c.name} checked={choice === c.name} onChange={() => pick(c.name)} data-testid={`network-${c.name}`} />
              <span className="network-choice-text">
                <strong>{c.label}</strong>
                <span className="muted small block">{c.hint}</span>
                {c.name !== 'custom' && (
                  <span className="block small mono muted break" data-testid={`network-${c.name}-urls`}>
                    {NETWORKS[c.name].hubUrl} · {NETWORKS[c.name].serviceUrl}
                  </span>
                )}
              </span>
            </label>
          ))}
        </fieldset>
        {choice === 'custom' && (
          <div className="grid-2 fields-2">
            <TextField
              label="Hub WebSocket URL"
              hint="ws://HOST:PORT or HOST:PORT, without /ws (it is added)."
              error={errors.hubUrl}
              testId="custom-hub-field"
              value={hubUrl}
              onChange={onHubUrl}
              inputTestId="custom-hub-url"
              autoComplete="off"
              spellCheck={false}
            />
            <TextField
              label="Hub API URL"
              hint="ServiceURL, where the key is checked; empty: the hub's own address."
              error={errors.serviceUrl}
              testId="custom-service-field"
              value={serviceUrl}
              onChange={onServiceUrl}
              inputTestId="custom-service-url"
              autoComplete="off"
              spellCheck={false}
            />
          </div>
        )}
        {otherErrors.length > 0 && <ErrorText error={otherErrors.map(([, v]) => v).join(' ')} testId="network-error" />}
        {warnings && (
          <div className="banner banner-warn" role="status" data-testid="network-warning">
            {Object.values(warnings).map((w) => (
              <p key={w}>{w}</p>
            ))}
            <p>Saved. Continue if this is the hub you mean.</p>
          </div>
        )}
        {!held && (
          <StepActions>
            <BusyButton type="submit" className="primary" data-testid="network-save" busy={state.pending} busyLabel="Saving…">
              Continue
            </BusyButton>
          </StepActions>
        )}
      </form>
      {held && (
        <KeyDestinationConfirm
          confirmation={held.confirmation}
          onDone={(v) => {
            if (v.status === 'approved') void refresh().then(onNext);
          }}
          onCancel={() => setHeld(null)}
        >
          <form
            className="retype-key"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              void confirmWithKey();
            }}
          >
            <TextField
              label="Type your provider key again to allow it"
              hint={`A key is saved on this machine; ${networkLabel(held.target.hubUrl)} has not had it. A new key for this network works too.`}
              error={confirmState.error}
              testId="network-confirm-key-field"
              inputTestId="network-confirm-key"
              type="password"
              autoComplete="off"
              value={retyped}
              onChange={setRetyped}
              placeholder="sk-prov-…"
            />
            <StepActions>
              <BusyButton type="submit" className="primary" data-testid="network-confirm" busy={confirmState.pending} busyLabel="Saving…">
                Allow and continue
              </BusyButton>
            </StepActions>
          </form>
        </KeyDestinationConfirm>
      )}
      <ErrorText error={state.error} />
    </section>
  );
}
