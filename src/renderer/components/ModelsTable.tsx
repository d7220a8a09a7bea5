// The models this machine can serve: health, load, on/off and warmup.
import { useState } from 'react';
import type { WarmupResult } from '../../shared/views/models';
import type { EndpointState, ModelState } from '../../shared/types';
import { getBridge } from '../bridge';
import { fmtMs } from '../lib/format';
import { notify, setModels } from '../store/actions';
import { HealthBadge } from './Badge';
import { CatalogueMark } from './CatalogueMark';
import { Toggle } from './Toggle';
import { DataTable, ModelCell } from './DataTable';
import { BusyButton } from './BusyButton';
import { ErrorText } from './Field';
import { useCall } from '../lib/use-call';

function slug(id: string): string {
  return id.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** Why a model is not healthy, beside its badge: the engine's state and the reason (a model whose engine
 *  died stays in the table, shown down, and serves again once the engine answers). */
function ModelTrouble({ m }: { m: ModelState }) {
  if (m.health === 'healthy') return null;
  const ep = m.endpoints.find((e) => e.condition) ?? m.endpoints.find((e) => e.lastError);
  if (!ep) return null;
  const what = ep.condition ? CONDITION_LABEL[ep.condition] : undefined;
  return (
    <div className="small muted" data-testid={`model-trouble-${slug(m.id)}`} data-condition={ep.condition}>
      {what && <strong>{what}</strong>}
      {what && ep.lastError ? ': ' : ''}
      {ep.lastError}
    </div>
  );
}

const HOLD_CAUSE: Record<NonNullable<ModelState['gpuHold']>['cause'], string> = {
  given_back: 'you gave it back',
  gpu_busy: 'another program is using it',
  gpu_hot: 'it is over its ceiling',
  schedule: 'your schedule',
};

/** On a rig with several GPUs: where the model runs, and whether a paused GPU holds it off the network. */
function GpuPlace({ m }: { m: ModelState }) {
  if (!m.gpus) return null;
  const where =
    m.gpus.source === 'unknown'
      ? 'GPU not known'
      : m.gpus.indexes.length === 0
        ? 'no GPU'
        : `GPU ${m.gpus.indexes.join(', ')}${m.gpus.source === 'owner' ? ' (models.json)' : ''}`;
  return (
    <div className="small" data-testid={`model-gpus-${slug(m.id)}`} data-source={m.gpus.source} data-held={m.gpuHold ? m.gpuHold.cause : ''}>
      <span className="muted">{where}</span>
      {m.gpuHold && (
        <>
          {' · '}
          <span className="warn-text">
            Not offered: GPU {m.gpuHold.gpu} is paused ({HOLD_CAUSE[m.gpuHold.cause]})
          </span>
        </>
      )}
    </div>
  );
}

/** A mapping the engine's report contradicts: held back until the owner confirms this very finding. */
function MappingFinding({ m }: { m: ModelState }) {
  const [confirm, state] = useCall(async () => {
    setModels(await getBridge().invoke('models.confirmMapping', { model: m.id, signature: m.mapping!.signature }));
  });
  const f = m.mapping;
  if (!f || f.code === 'mapping_unchecked') return null;
  return (
    <div className="small" data-testid={`mapping-finding-${slug(m.id)}`} data-code={f.code} data-confirmed={f.confirmed}>
      <span className={f.confirmed ? 'muted' : 'warn-text'}>{f.text}</span>{' '}
      {f.confirmed ? (
        <span className="muted">Announced anyway: you confirmed it.</span>
      ) : (
        <>
          <span>Not announced: the network’s fingerprint check would fail it, at your cost.</span>{' '}
          <button type="button" className="small-button" onClick={() => void confirm()} disabled={state.pending} data-testid={`mapping-confirm-${slug(m.id)}`}>
            Announce anyway
          </button>
        </>
      )}
      <ErrorText error={state.error} />
    </div>
  );
}

const CONDITION_LABEL: Record<NonNullable<EndpointState['condition']>, string> = {
  down: 'engine not running',
  key_rejected: 'engine refuses our key',
  loading: 'loading',
  no_response: 'no response to a 1-token chat',
  engine_error: 'engine error on a 1-token chat',
  not_served: 'model not served at this engine',
};

function WarmupButton({ model }: { model: string }) {
  const [state, setState] = useState<{ pending: boolean; result?: WarmupResult; error?: string }>({ pending: false });
  const run = async () => {
    setState({ pending: true });
    try {
      const result = await getBridge().invoke('models.warmup', { model });
      setState({ pending: false, result });
    } catch (err) {
      setState({ pending: false, error: (err as Error).message });
    }
  };
  const r = state.result;
  return (
    <div className="warmup">
      <BusyButton className="small-button" onClick={() => void run()} data-testid={`warmup-${slug(model)}`} busy={state.pending} busyLabel="Warming up…">
        Warm up
      </BusyButton>
      {r && (
        <span className={`small ${r.success ? 'muted' : 'error-text'}`} data-testid={`warmup-result-${slug(model)}`}>
          {r.success
            ? `Loaded in ${fmtMs(r.loadTimeMs)}${r.memoryMb ? `, ${(r.memoryMb / 1024).toFixed(1)} GB` : ''}`
            : `Failed: ${r.error ?? 'unknown error'}`}
        </span>
      )}
      {r?.warning && (
        <span className="small muted" data-testid={`warmup-warning-${slug(model)}`}>
          Note: {r.warning}
        </span>
      )}
      {state.error && <span className="small error-text">{state.error}</span>}
    </div>
  );
}

/** `compact` leaves out the endpoints column (the dashboard; Engines & models shows them). */
export function ModelsTable({ models, compact }: { models: ModelState[]; compact?: boolean }) {
  // The switch moves at once; it falls back if the agent refuses.
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
  const toggle = async (m: ModelState, enabled: boolean) => {
    setWanted((w) => ({ ...w, [m.id]: enabled }));
    try {
      setModels(await getBridge().invoke('models.setEnabled', { model: m.id, enabled }));
    } catch (err) {
      notify('error', `Could not ${enabled ? 'enable' : 'disable'} ${m.id}: ${(err as Error).message}`);
    } finally {
      setWanted((w) => {
        const { [m.id]: _done, ...rest } = w;
        return rest;
      });
    }
  };
  if (models.length === 0) {
    return (
      <p className="empty" data-testid="models-empty">
        No models yet. Start an engine (vLLM, SGLang, Ollama, llama.cpp, LM Studio, TGI) or add its address under Engines &amp; models.
      </p>
    );
  }
  return (
    <DataTable
      testId="models-table"
      columns={[
        { label: 'Model' },
        { label: 'Health' },
        !compact && { label: 'Endpoints' },
        { label: 'In flight', num: true },
        { label: 'Queued', num: true },
        { label: 'Serve' },
        { label: 'Warmup' },
      ]}
    >
      {models.map((m) => (
        <tr key={m.id} data-testid={`model-row-${slug(m.id)}`} data-enabled={m.enabled}>
          <ModelCell model={m.id}>
            {' '}
            <CatalogueMark model={m.id} />
          </ModelCell>
          <td>
            <HealthBadge health={m.health} testId={`model-health-${slug(m.id)}`} />
            {m.enabled && <ModelTrouble m={m} />}
            <MappingFinding m={m} />
            <GpuPlace m={m} />
          </td>
          {!compact && (
            <td className="small">
              {m.endpoints.map((e) => (
                <div key={e.url} title={e.lastError ?? undefined}>
                  <span className="mono">{e.url}</span> <span className="muted">({e.engineType})</span>
                </div>
              ))}
            </td>
          )}
          <td className="num" data-testid={`model-inflight-${slug(m.id)}`}>
            {m.inFlight} / {m.maxConcurrent}
          </td>
          <td className="num">
            {m.queued} / {m.maxQueue}
          </td>
          <td>
            <Toggle
              checked={wanted[m.id] ?? m.enabled}
              label={`Serve ${m.id}`}
              hideLabel
              disabled={m.id in wanted}
              onChange={(v) => void toggle(m, v)}
              testId={`model-toggle-${slug(m.id)}`}
            />
          </td>
          <td>
            <WarmupButton model={m.id} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export { slug as modelSlug };
