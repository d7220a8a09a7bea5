// Onboarding step 2: the provider key, with where keys come from (the Swan Inference dashboard) and the
// hub's live word on it: valid or not, its status, its registration step and the next steps. It is
// checked with the network saved in step 1 (settings.checkKey asks the saved ServiceURL), and the step
// says which one. When the platform cannot be reached the key can be saved anyway: it is checked once the
// network is back (the agent keeps asking), as Settings saves a key without asking.
import { useState } from 'react';
import type { KeyStatusDetailView } from '../../../shared/views/settings';
import { dashboardUrlOf } from '../../../shared/networks';
import { getBridge } from '../../bridge';
import { networkLabel } from '../../lib/network';
import { useCall } from '../../lib/use-call';
import { setSettings, setSnapshot } from '../../store/actions';
import { useStore } from '../../store/store';
import { ErrorText, TextField } from '../Field';
import { KeyStatus } from './KeyStatus';
import { StepActions } from './StepActions';
import { BusyButton } from '../BusyButton';

type Check = { valid: boolean; code: string; message: string; detail?: KeyStatusDetailView; unreachable?: boolean };

export function KeyStep({ onBack, onNext }: { onBack: () => void; onNext: () => void }) {
  const hasKey = useStore((s) => s.snapshot?.hasKey ?? false);
  // The agent's own, re-checked status of the saved key (GET /api/v1/provider/status).
  const live = useStore((s) => s.snapshot?.providerStatus);
  const settings = useStore((s) => s.settings);
  const [key, setKey] = useState('');
  const [result, setResult] = useState<Check | null>(null);
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [checkedLater, setCheckedLater] = useState(false);
  const save = async (k: string): Promise<boolean> => {
    const saved = await getBridge().invoke('settings.save', { patch: { providerKey: k } });
    if (!saved.ok) {
      setFieldError(saved.errors.providerKey ?? Object.values(saved.errors).join(' '));
      return false;
    }
    setKey('');
    setSnapshot(await getBridge().invoke('snapshot.get', {}));
    setSettings(await getBridge().invoke('settings.get', {}));
    return true;
  };
  const [submit, state] = useCall(async () => {
    setResult(null);
    setFieldError(null);
    setCheckedLater(false);
    const k = key.trim();
    if (!k) {
      setFieldError('Paste the provider key from your Swan Inference dashboard.');
      return;
    }
    const r = await getBridge().invoke('settings.checkKey', { key: k });
    setResult(r);
    if (r.valid) await save(k);
  });
  // The platform could not be asked: save it as it is; the agent checks it once the network is back.
  const [saveAnyway, anywayState] = useCall(async () => {
    if (await save(key.trim())) {
      setResult(null);
      setCheckedLater(true);
    }
  });
  // "Check again" asks the agent to re-read the saved key's status now; the live status then shows.
  const [again, againState] = useCall(async () => {
    await getBridge().invoke('providerStatus.refresh', {});
    setResult(null);
    setSnapshot(await getBridge().invoke('snapshot.get', {}));
  });
  // Each network's own dashboard: a mainnet key is refused by the testnet hub, and the other way round.
  const dashboard = settings ? dashboardUrlOf(settings.hubUrl) : undefined;
  const liveShown = !result && hasKey && live && live.state !== 'no_key' && live.state !== 'checking';
  return (
    <section className="card onboarding-step" aria-labelledby="step-key-title" data-testid="onboarding-key">
      <h2 id="step-key-title">Your provider key</h2>
      <p className="small">
        {dashboard ? (
          <>
            Get a provider key from your{' '}
            <a href={dashboard} target="_blank" rel="noopener noreferrer" data-testid="dashboard-link">
              {settings ? networkLabel(settings.hubUrl) : 'Swan Inference'} dashboard
            </a>{' '}
            (register this machine as a provider there).
          </>
        ) : (
          <span data-testid="dashboard-custom">Get a provider key from whoever runs this hub.</span>
        )}{' '}
        It is checked with <strong data-testid="key-network">{settings ? networkLabel(settings.hubUrl) : 'the network'}</strong> at{' '}
        <span className="mono break" data-testid="key-service-url">
          {settings?.serviceUrl ?? ''}
        </span>
        , then stored safely on this machine.
      </p>
      {hasKey && (
        <p className="ok-text" data-testid="key-saved">
          A key is saved. You can replace it by pasting another one.
        </p>
      )}
      <form
        className="inline-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <TextField
          label="Provider key"
          hint="It looks like sk-prov-… and is shown once on the dashboard."
          error={fieldError ?? (result && !result.valid && !result.unreachable ? result.message : null)}
          testId="key-field"
          type="password"
          autoComplete="off"
          value={key}
          onChange={setKey}
          placeholder="sk-prov-…"
          inputTestId="key-input"
        />
        <div className="form-actions">
          <BusyButton type="submit" className={hasKey ? undefined : 'primary'} data-testid="key-check" busy={state.pending} busyLabel="Checking…">
            Check and save
          </BusyButton>
          {hasKey && (
            <BusyButton onClick={() => void again()} data-testid="key-recheck" busy={againState.pending} busyLabel="Checking…">
              Check again
            </BusyButton>
          )}
        </div>
      </form>
      {result?.unreachable && (
        <div className="banner banner-warn" role="status" data-testid="key-unreachable">
          <p>{result.message}</p>
          <BusyButton onClick={() => void saveAnyway()} data-testid="key-save-anyway" busy={anywayState.pending} busyLabel="Saving…">
            Save anyway (checked later)
          </BusyButton>
        </div>
      )}
      {checkedLater && (
        <p className="ok-text" role="status" data-testid="key-checked-later">
          Saved. The platform could not be reached, so the key is checked once the network is back; its status shows below.
        </p>
      )}
      {result?.valid && (
        <p className="ok-text" role="status" data-testid="key-valid">
          {result.message || 'Key accepted.'}
        </p>
      )}
      {/* What the check found, by its stable code (key_accepted, key_refused, not_a_hub, key_unchecked). */}
      {result && <span hidden data-testid="key-result" data-code={result.code} />}
      {result?.detail && <KeyStatus detail={result.detail} />}
      {liveShown && (
        <>
          <p className={live.state === 'ok' ? 'ok-text' : 'warn-text'} data-testid="key-live">
            {live.message ?? (live.state === 'unreachable' ? `The hub could not be reached: ${live.error ?? live.url}` : `Status: ${live.state}`)}
          </p>
          <KeyStatus detail={live} />
        </>
      )}
      <ErrorText error={state.error ?? againState.error ?? anywayState.error} testId="key-error" />
      <StepActions onBack={onBack} backTestId="key-back">
        <button type="button" className={hasKey ? 'primary' : undefined} disabled={!hasKey} onClick={onNext} data-testid="key-continue">
          Continue
        </button>
        {!hasKey && <span className="muted small">Save a key to continue.</span>}
      </StepActions>
    </section>
  );
}
