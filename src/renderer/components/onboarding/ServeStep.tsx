// Onboarding step 3: the GPUs and engines found, and every model they offer with its own Serve switch
// (nothing is switched off without the owner seeing it).
import { useState } from 'react';
import type { ModelState } from '../../../shared/types';
import { getBridge } from '../../bridge';
import { notify, setModels } from '../../store/actions';
import { useStore } from '../../store/store';
import { HealthBadge } from '../Badge';
import { Card } from '../Card';
import { AddEndpointForm, EngineList, GpuList, RescanButton } from '../Discovery';
import { modelSlug } from '../ModelsTable';
import { Toggle } from '../Toggle';

function engineTypes(m: ModelState): string {
  return [...new Set(m.endpoints.map((e) => e.engineType))].join(', ') || 'no engine';
}

export function ServeStep() {
  const snapshot = useStore((s) => s.snapshot);
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
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
  const on = models.filter((m) => m.enabled).length;
  return (
    <Card title={`3. Engines and models to serve${on > 0 ? ' ✓' : ''}`} testId="onboarding-serve">
      <div className="grid-2">
        <div data-testid="onboarding-gpus">
          <h3 className="small-heading">GPUs on this machine</h3>
          <GpuList inventory={snapshot.gpu} />
        </div>
        <div data-testid="onboarding-engines">
          <h3 className="small-heading">
            Engines found <RescanButton />
          </h3>
          <EngineList engines={snapshot.engines} />
          <details>
            <summary>Add an engine by address</summary>
            <AddEndpointForm />
          </details>
        </div>
      </div>
      <h3 className="small-heading">Models</h3>
      {models.length === 0 ? (
        <p className="warn-text" data-testid="onboarding-no-models">
          No models yet: they appear when an engine is found. Start one (for example <span className="mono">ollama serve</span>) and press Rescan, or add its
          address above. You can also finish now; until a model is served the console says “nothing to serve”.
        </p>
      ) : (
        <ul className="plain-list model-picks" data-testid="onboarding-models">
          {models.map((m) => (
            <li key={m.id} className="check-row" data-testid={`serve-row-${modelSlug(m.id)}`}>
              <Toggle checked={wanted[m.id] ?? m.enabled} disabled={m.id in wanted} onChange={(v) => void toggle(m.id, v)} label={`Serve ${m.id}`} hideLabel testId={`pick-${modelSlug(m.id)}`} />
              <span className="mono">{m.id}</span> <HealthBadge health={m.health} />{' '}
              <span className="muted small">
                {engineTypes(m)} · {(wanted[m.id] ?? m.enabled) ? 'served' : 'off'}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
