// Onboarding step 1: which Swan Inference network this machine serves (mainnet, testnet, or a custom
// hub such as the local dev hub), with the addresses each choice means shown in full.
import { useEffect, useState } from 'react';
import { LOCAL_DEV_HUB, NETWORKS, networkOf, type NetworkName } from '../../../shared/networks';
import { getBridge } from '../../bridge';
import { useCall } from '../../lib/use-call';
import { setSettings, setSnapshot } from '../../store/actions';
import { useStore } from '../../store/store';
import { Card } from '../Card';
import { ErrorText, TextField } from '../Field';

const CHOICES: Array<{ name: NetworkName; label: string; hint: string }> = [
  { name: 'mainnet', label: NETWORKS.mainnet.label, hint: 'The live network: real requests, real earnings.' },
  { name: 'testnet', label: NETWORKS.testnet.label, hint: 'For trying a setup against the test network first.' },
  { name: 'custom', label: 'Custom hub (development)', hint: 'Your own hub, for example "swan-provider dev-hub" on this machine.' },
];

export function NetworkStep({ done, onDone }: { done: boolean; onDone: () => void }) {
  const settings = useStore((s) => s.settings);
  const current = settings ? networkOf(settings.hubUrl) : 'mainnet';
  const [choice, setChoice] = useState<NetworkName>(current);
  const [hubUrl, setHubUrl] = useState(settings && current === 'custom' ? settings.hubUrl : LOCAL_DEV_HUB.hubUrl);
  const [serviceUrl, setServiceUrl] = useState(settings && current === 'custom' ? settings.serviceUrl : LOCAL_DEV_HUB.serviceUrl);
  const [errors, setErrors] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!settings) return;
    const n = networkOf(settings.hubUrl);
    setChoice(n);
    if (n === 'custom') {
      setHubUrl(settings.hubUrl);
      setServiceUrl(settings.serviceUrl);
    }
  }, [settings?.hubUrl, settings?.serviceUrl]);
  const [save, state] = useCall(async () => {
    setErrors({});
    const target = choice === 'custom' ? { hubUrl: hubUrl.trim(), serviceUrl: serviceUrl.trim() } : { hubUrl: NETWORKS[choice].hubUrl, serviceUrl: NETWORKS[choice].serviceUrl };
    const r = await getBridge().invoke('settings.save', { patch: target });
    if (!r.ok) {
      setErrors(r.errors);
      return;
    }
    setSettings(await getBridge().invoke('settings.get', {}));
    setSnapshot(await getBridge().invoke('snapshot.get', {}));
    onDone();
  });
  return (
    <Card title={`1. Network${done ? ' ✓' : ''}`} testId="onboarding-network">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <fieldset className="network-picks">
          <legend className="sr-only">Network</legend>
          {CHOICES.map((c) => (
            <label key={c.name} className="check-row network-choice">
              <input type="radio" name="network" value={c.name} checked={choice === c.name} onChange={() => setChoice(c.name)} data-testid={`network-${c.name}`} />
              <span>
                <strong>{c.label}</strong> <span className="muted small">{c.hint}</span>
                {c.name !== 'custom' && (
                  <span className="block small mono muted" data-testid={`network-${c.name}-urls`}>
                    {NETWORKS[c.name].hubUrl} · {NETWORKS[c.name].serviceUrl}
                  </span>
                )}
              </span>
            </label>
          ))}
        </fieldset>
        {choice === 'custom' && (
          <div className="grid-2">
            <TextField label="Hub WebSocket URL" hint="WebSocketURL, without /ws (it is added)." error={errors.hubUrl} testId="custom-hub-field" value={hubUrl} onChange={setHubUrl} inputTestId="custom-hub-url" />
            <TextField label="Hub API URL" hint="ServiceURL: where the key is checked." error={errors.serviceUrl} testId="custom-service-field" value={serviceUrl} onChange={setServiceUrl} inputTestId="custom-service-url" />
          </div>
        )}
        <div className="form-actions">
          <button type="submit" className={done ? undefined : 'primary'} disabled={state.pending} data-testid="network-save">
            {state.pending ? 'Saving…' : done ? 'Save network' : 'Use this network'}
          </button>
          {done && settings && (
            <span className="muted small" role="status" data-testid="network-current">
              Using {networkOf(settings.hubUrl) === 'custom' ? 'a custom hub' : NETWORKS[networkOf(settings.hubUrl) as 'mainnet' | 'testnet'].label}: {settings.hubUrl}
            </span>
          )}
        </div>
      </form>
      <ErrorText error={state.error} />
    </Card>
  );
}
