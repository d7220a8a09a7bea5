// First run: paste the provider key (checked against the hub), see what was found, pick models, go.
import { useState } from 'react';
import { getBridge } from '../bridge';
import { Card } from '../components/Card';
import { AddEndpointForm, EngineList, GpuList, RescanButton } from '../components/Discovery';
import { ErrorText, Field } from '../components/Field';
import { modelSlug } from '../components/ModelsTable';
import { HealthBadge } from '../components/Badge';
import { useCall } from '../lib/use-call';
import { finishOnboarding, notify, setModels, setSettings, setSnapshot } from '../store/actions';
import { useStore } from '../store/store';

function KeyStep() {
  const hasKey = useStore((s) => s.snapshot?.hasKey ?? false);
  const [key, setKey] = useState('');
  const [result, setResult] = useState<{ valid: boolean; message: string } | null>(null);
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [submit, state] = useCall(async () => {
    setResult(null);
    setFieldError(null);
    const k = key.trim();
    if (!k) {
      setFieldError('Paste the provider key from your Swan dashboard.');
      return;
    }
    const check = await getBridge().invoke('settings.checkKey', { key: k });
    setResult(check);
    if (!check.valid) return;
    const saved = await getBridge().invoke('settings.save', { patch: { providerKey: k } });
    if (!saved.ok) {
      setFieldError(saved.errors.providerKey ?? Object.values(saved.errors).join(' '));
      return;
    }
    setKey('');
    setSnapshot(await getBridge().invoke('snapshot.get', {}));
    setSettings(await getBridge().invoke('settings.get', {}));
  });
  return (
    <Card title="1. Your provider key" testId="onboarding-key">
      {hasKey && (
        <p className="ok-text" data-testid="key-saved">
          A key is saved. You can replace it by pasting another one.
        </p>
      )}
      <form
        className="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field label="Provider key" hint="From your Swan Inference provider dashboard. It is checked with the hub, then stored safely on this machine." error={fieldError ?? (result && !result.valid ? result.message : null)} testId="key-field">
          {(id, d) => (
            <input id={id} aria-describedby={d} type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} placeholder="sk-…" data-testid="key-input" />
          )}
        </Field>
        <div className="form-actions">
          <button type="submit" className="primary" disabled={state.pending} data-testid="key-check">
            {state.pending ? 'Checking…' : 'Check and save'}
          </button>
        </div>
      </form>
      {result?.valid && (
        <p className="ok-text" role="status" data-testid="key-valid">
          {result.message || 'Key accepted.'}
        </p>
      )}
      <ErrorText error={state.error} testId="key-error" />
    </Card>
  );
}

function ModelsStep() {
  const models = useStore((s) => s.snapshot?.models ?? []);
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
  const toggle = async (id: string, enabled: boolean) => {
    setWanted((w) => ({ ...w, [id]: enabled }));
    try {
      setModels(await getBridge().invoke('models.setEnabled', { model: id, enabled }));
    } catch (err) {
      notify('error', `Could not change ${id}: ${(err as Error).message}`);
    } finally {
      setWanted((w) => {
        const { [id]: _done, ...rest } = w;
        return rest;
      });
    }
  };
  return (
    <Card title="4. Models to serve" testId="onboarding-models">
      {models.length === 0 ? (
        <p className="empty">No models yet: they appear when an engine is found. You can also finish now and add engines later.</p>
      ) : (
        <fieldset className="model-picks">
          <legend className="sr-only">Models to serve</legend>
          {models.map((m) => (
            <label key={m.id} className="check-row">
              <input type="checkbox" checked={wanted[m.id] ?? m.enabled} disabled={m.id in wanted} onChange={(e) => void toggle(m.id, e.target.checked)} data-testid={`pick-${modelSlug(m.id)}`} />
              <span className="mono">{m.id}</span> <HealthBadge health={m.health} />
            </label>
          ))}
        </fieldset>
      )}
    </Card>
  );
}

export function Onboarding() {
  const snapshot = useStore((s) => s.snapshot);
  const [finish, finishState] = useCall(async () => {
    finishOnboarding(await getBridge().invoke('onboarding.complete', {}));
  });
  if (!snapshot) return null;
  return (
    <div className="page onboarding" data-testid="page-onboarding">
      <h1>Welcome to Swan Provider</h1>
      <p className="lead">Your GPU can serve AI models to the Swan Inference network and earn for each request. Four short steps.</p>
      <KeyStep />
      <div className="grid-2">
        <Card title="2. GPUs on this machine" testId="onboarding-gpus">
          <GpuList inventory={snapshot.gpu} />
        </Card>
        <Card title="3. Engines found" actions={<RescanButton />} testId="onboarding-engines">
          <EngineList engines={snapshot.engines} />
          <details>
            <summary>Add an engine by address</summary>
            <AddEndpointForm />
          </details>
        </Card>
      </div>
      <ModelsStep />
      <div className="form-actions">
        <button type="button" className="primary big" disabled={!snapshot.hasKey || finishState.pending} onClick={() => void finish()} data-testid="onboarding-go">
          {finishState.pending ? 'Starting…' : 'Start serving'}
        </button>
        {!snapshot.hasKey && <span className="muted">Save a valid key first.</span>}
        <ErrorText error={finishState.error} />
      </div>
    </div>
  );
}
