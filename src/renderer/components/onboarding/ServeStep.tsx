// Onboarding step 3: the GPUs and engines found (an engine can be added by address, and removed again),
// and every model they offer with its own Serve switch (nothing is switched off without the owner seeing it).
import { useState } from 'react';
import type { ModelState } from '../../../shared/types';
import { getBridge } from '../../bridge';
import { notify, setModels } from '../../store/actions';
import { useStore } from '../../store/store';
import { HealthBadge } from '../Badge';
import { AddEndpointForm, EngineList, GpuList, RescanButton } from '../Discovery';
import { GetModelCard } from '../GetModel';
import { modelSlug } from '../ModelsTable';
import { Toggle } from '../Toggle';
import { StepActions } from './StepActions';

function engineTypes(m: ModelState): string {
  return [...new Set(m.endpoints.map((e) => e.engineType))].join(', ') || 'no engine';
}

export function ServeStep({ onBack, onNext }: { onBack: () => void; onNext: () => void }) {
  const snapshot = useStore((s) => s.snapshot);
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
  const [getModel, setGetModel] = useState(false);
  if (!snapshot) return null;
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
  const models = snapshot.models;
  const noEngine = snapshot.engines.every((e) => !e.reachable);
  return (
    <section className="card onboarding-step" aria-labelledby="step-serve-title" data-testid="onboarding-serve">
      <h2 id="step-serve-title">Engines and models to serve</h2>
      <div data-testid="onboarding-gpus">
        <h3 className="small-heading">GPUs on this machine</h3>
        <GpuList inventory={snapshot.gpu} />
      </div>
      <div data-testid="onboarding-engines">
        <div className="heading-row">
          <h3 className="small-heading">Engines found</h3>
          <RescanButton />
        </div>
        <EngineList engines={snapshot.engines} />
        <details open={noEngine} className="add-engine">
          <summary>Add an engine by address</summary>
          <AddEndpointForm />
        </details>
      </div>
      <h3 className="small-heading">Models</h3>
      {models.length === 0 ? (
        <p className="warn-text" data-testid="onboarding-no-models">
          No models yet: they appear when an engine is found. Start one (for example <span className="mono">ollama serve</span>) and press Rescan, or add its
          address above, or get one the network pays for below. You can also go on now; until a model is served the console says “nothing to serve”.
        </p>
      ) : (
        <ul className="plain-list model-picks" data-testid="onboarding-models">
          {models.map((m) => (
            <li key={m.id} className="model-pick" data-testid={`serve-row-${modelSlug(m.id)}`}>
              <Toggle
                checked={wanted[m.id] ?? m.enabled}
                disabled={m.id in wanted}
                onChange={(v) => void toggle(m.id, v)}
                label={`Serve ${m.id}`}
                hideLabel
                testId={`pick-${modelSlug(m.id)}`}
              />
              <span className="mono break">{m.id}</span>
              <span className="model-pick-state">
                <HealthBadge health={m.health} />{' '}
                <span className="muted small">
                  {engineTypes(m)} · {(wanted[m.id] ?? m.enabled) ? 'served' : 'off'}
                </span>
              </span>
            </li>
          ))}
        </ul>
      )}
      {getModel ? (
        <GetModelCard />
      ) : (
        <button type="button" className={models.length === 0 ? 'primary' : undefined} onClick={() => setGetModel(true)} data-testid="onboarding-get-model">
          Get a model for this GPU
        </button>
      )}
      <StepActions onBack={onBack} backTestId="serve-back">
        <button type="button" className="primary" onClick={onNext} data-testid="serve-continue">
          Continue
        </button>
      </StepActions>
    </section>
  );
}
