// Engines and models: discovery, adding an endpoint, per-model limits, pause rules.
import { useState } from 'react';
import type { ModelState } from '../../shared/types';
import { getBridge } from '../bridge';
import { Card } from '../components/Card';
import { CatalogueCard } from '../components/CatalogueMark';
import { AddEndpointForm, EngineList, RescanButton } from '../components/Discovery';
import { ErrorText } from '../components/Field';
import { GetModelCard } from '../components/GetModel';
import { ModelsTable, modelSlug } from '../components/ModelsTable';
import { EndpointCapacity } from '../components/EndpointCapacity';
import { PauseSchedule } from '../components/PauseSchedule';
import { PowerLimits } from '../components/PowerLimits';
import { Toggle } from '../components/Toggle';
import { TryIt } from '../components/TryIt';
import { useCall, useFetch } from '../lib/use-call';
import { notify, setModels, setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { DataTable, ModelCell } from '../components/DataTable';

function LimitsRow({ model }: { model: ModelState }) {
  const [maxConcurrent, setMaxConcurrent] = useState(String(model.maxConcurrent));
  const [maxQueue, setMaxQueue] = useState(String(model.maxQueue));
  const [save, state] = useCall(async () => {
    const c = Number(maxConcurrent);
    const q = Number(maxQueue);
    if (!Number.isInteger(c) || c < 1 || c > 1024) throw new Error('Concurrent requests must be a whole number from 1 to 1024.');
    if (!Number.isInteger(q) || q < 0 || q > 10_000) throw new Error('Queue length must be a whole number from 0 to 10,000.');
    setModels(await getBridge().invoke('models.setLimits', { model: model.id, maxConcurrent: c, maxQueue: q }));
    notify('info', `Limits of ${model.id} saved.`);
  });
  const s = modelSlug(model.id);
  const changed = maxConcurrent !== String(model.maxConcurrent) || maxQueue !== String(model.maxQueue);
  return (
    <tr data-testid={`limits-row-${s}`}>
      <ModelCell model={model.id} />
      <td>
        <input
          type="number"
          min={1}
          max={1024}
          className="num-input"
          value={maxConcurrent}
          onChange={(e) => setMaxConcurrent(e.target.value)}
          aria-label={`Concurrent requests for ${model.id}`}
          data-testid={`limit-concurrent-${s}`}
        />
      </td>
      <td>
        <input
          type="number"
          min={0}
          max={10000}
          className="num-input"
          value={maxQueue}
          onChange={(e) => setMaxQueue(e.target.value)}
          aria-label={`Queue length for ${model.id}`}
          data-testid={`limit-queue-${s}`}
        />
      </td>
      <td>
        <button type="button" className="small-button" disabled={!changed || state.pending} onClick={() => void save()} data-testid={`limit-save-${s}`}>
          Save
        </button>
        <ErrorText error={state.error} testId={`limit-error-${s}`} />
      </td>
    </tr>
  );
}

/** The guard rails: a temperature and a power ceiling per GPU (0: off). */
function GuardRailsForm() {
  const settings = useStore((s) => s.settings);
  const [temp, setTemp] = useState<string | null>(null);
  const [power, setPower] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const t = temp ?? String(settings?.gpuTemperatureCeilingC ?? 0);
  const p = power ?? String(settings?.gpuPowerCeilingW ?? 0);
  const [save, state] = useCall(async () => {
    setSaved(false);
    const r = await getBridge().invoke('settings.save', { patch: { gpuTemperatureCeilingC: Number(t), gpuPowerCeilingW: Number(p) } });
    if (!r.ok) throw new Error(Object.values(r.errors).join(' '));
    setSettings(await getBridge().invoke('settings.get', {}));
    setTemp(null);
    setPower(null);
    setSaved(true);
  });
  return (
    <div data-testid="guard-rails">
      <h3>Guard rails</h3>
      <p className="small muted">
        A GPU at a ceiling first serves half as many requests at once, then pauses serving until it is clearly under again. 0 turns a rail off.
      </p>
      <div className="inline-form">
        <label htmlFor="guard-temp">Temperature ceiling (°C)</label>
        <input
          id="guard-temp"
          type="number"
          min={0}
          max={110}
          className="num-input"
          value={t}
          onChange={(e) => setTemp(e.target.value)}
          data-testid="guard-temp"
        />
        <label htmlFor="guard-power">Power ceiling (W)</label>
        <input
          id="guard-power"
          type="number"
          min={0}
          max={2000}
          className="num-input"
          value={p}
          onChange={(e) => setPower(e.target.value)}
          data-testid="guard-power"
        />
        <button type="button" className="small-button" disabled={!settings || state.pending} onClick={() => void save()} data-testid="guard-save">
          Save
        </button>
        {saved && (
          <span className="small muted" role="status" data-testid="guard-saved">
            Saved.
          </span>
        )}
      </div>
      <ErrorText error={state.error} testId="guard-error" />
    </div>
  );
}

function PauseRules() {
  const settings = useStore((s) => s.settings);
  const perGpu = useStore((s) => (s.snapshot?.gpuServing?.length ?? 0) > 0);
  const processes = useFetch(() => getBridge().invoke('gpu.processes', {}), []);
  const [wanted, setWanted] = useState<boolean | null>(null);
  const [save, state] = useCall(async (v: boolean) => {
    setWanted(v);
    try {
      const r = await getBridge().invoke('settings.save', { patch: { autoPauseOnGpuBusy: v } });
      if (!r.ok) throw new Error(Object.values(r.errors).join(' '));
      setSettings(await getBridge().invoke('settings.get', {}));
    } finally {
      setWanted(null);
    }
  });
  return (
    <Card title="Pause rules" testId="pause-rules">
      <Toggle
        checked={wanted ?? settings?.autoPauseOnGpuBusy ?? false}
        disabled={!settings || state.pending}
        onChange={(v) => void save(v)}
        label={
          perGpu
            ? 'Pause a GPU while another program (a game, a render) uses it; the other GPUs keep serving'
            : 'Pause serving while another program (a game, a render) uses the GPU'
        }
        testId="auto-pause-toggle"
      />
      <ErrorText error={state.error} />
      <GuardRailsForm />
      <PowerLimits />
      <h3>Programs on the GPU now</h3>
      {processes.error && <p className="muted small">Not available: {processes.error}</p>}
      {processes.data && processes.data.length === 0 && <p className="muted small">None reported.</p>}
      {processes.data && processes.data.length > 0 && (
        <ul className="plain-list small">
          {processes.data.map((p) => (
            <li key={p.pid}>
              <span className="mono">{p.name}</span> (pid {p.pid}){p.usedMemoryMb !== null ? ` · ${(p.usedMemoryMb / 1024).toFixed(1)} GB` : ''}
              {p.isEngine ? ' · engine' : ''}
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="small-button" onClick={processes.reload}>
        Refresh
      </button>
      <PauseSchedule />
    </Card>
  );
}

export function Engines() {
  const snapshot = useStore((s) => s.snapshot);
  if (!snapshot) return null;
  return (
    <div className="page" data-testid="page-engines">
      <h1>Engines &amp; models</h1>
      <Card title="Engines" actions={<RescanButton />} testId="engines-card">
        <EngineList engines={snapshot.engines} />
      </Card>
      <Card title="Add an engine by address">
        <AddEndpointForm />
      </Card>
      <Card title="Models" testId="engines-models-card">
        <ModelsTable models={snapshot.models} />
      </Card>
      <GetModelCard />
      <Card title="Endpoints: capacity and state" testId="endpoint-capacity-card">
        <EndpointCapacity models={snapshot.models} />
      </Card>
      <CatalogueCard />
      <TryIt />
      <div className="grid-2 grid-collapse">
        <Card title="Per-model limits" testId="limits-card">
          {snapshot.models.length === 0 ? (
            <p className="empty">No models yet.</p>
          ) : (
            <DataTable columns={[{ label: 'Model' }, { label: 'Concurrent' }, { label: 'Queue' }, { label: 'Save', srOnly: true }]}>
              {snapshot.models.map((m) => (
                <LimitsRow key={`${m.id}:${m.maxConcurrent}:${m.maxQueue}`} model={m} />
              ))}
            </DataTable>
          )}
        </Card>
        <PauseRules />
      </div>
    </div>
  );
}
