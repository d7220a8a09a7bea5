// Demand: which models the network pays for, beside what this machine serves, with "serve this":
// switch on a model an engine here already has (under the network's id, or under an Ollama tag: then it
// is announced as the network's id), or pull it into an Ollama engine here (progress shown).
import { useEffect, useState } from 'react';
import type { DemandRowView, DemandView } from '../../shared/views/demand';
import { getBridge } from '../bridge';
import { Card } from './Card';
import { ErrorText } from './Field';
import { fmtDateTime, fmtGb, fmtMoney, fmtPercent } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { DataTable, ModelCell } from './DataTable';

const HERE: Record<DemandRowView['here'], string> = {
  serving: 'serving here',
  on_disk: 'on disk, switched off',
  pullable: 'an Ollama engine here can pull it',
  none: 'no engine here can get it',
};

/** The fit and what it is judged from: the network's min_vram_gb, else the size on disk. */
function fitText(r: DemandRowView): string {
  const basis = r.minVramGb !== null ? `needs ${fmtGb(r.minVramGb, 0)}` : r.sizeGb !== null ? `${fmtGb(r.sizeGb)} on disk` : null;
  const details = [r.parameterSize, r.quantization].filter(Boolean).join(' ');
  if (r.fits === 'unknown') return basis ? `${basis}; no GPU found` : 'size unknown';
  return `${r.fits === 'yes' ? 'yes' : 'no'} (${basis}${details ? `, ${details}` : ''})`;
}

function ServeThis({ row, view, onView }: { row: DemandRowView; view: DemandView; onView: (v: DemandView) => void }) {
  const [name, setName] = useState(row.modelId.split('/').pop()?.toLowerCase() ?? row.modelId);
  const [enable, enableState] = useCall(async () => {
    await getBridge().invoke('models.setEnabled', { model: row.modelId, enabled: true });
    onView(await getBridge().invoke('demand.list', {}));
  });
  const [serve, serveState] = useCall(async () => onView(await getBridge().invoke('demand.serve', { modelId: row.modelId })));
  const [pull, pullState] = useCall(async () =>
    onView(await getBridge().invoke('demand.pull', { engineUrl: view.ollamaEngines[0]!, model: name.trim(), networkId: row.modelId })),
  );
  if (row.here === 'on_disk' && row.local) {
    return (
      <>
        <button type="button" onClick={() => void serve()} disabled={serveState.pending} title={`Announce ${row.local.model} as ${row.modelId}`}>
          Serve this
        </button>
        <ErrorText error={serveState.error} />
      </>
    );
  }
  if (row.here === 'on_disk') {
    return (
      <>
        <button type="button" onClick={() => void enable()} disabled={enableState.pending}>
          Serve this
        </button>
        <ErrorText error={enableState.error} />
      </>
    );
  }
  if (row.here !== 'pullable') return null;
  const p = view.pulls.find((x) => x.model === name.trim());
  return (
    <div className="inline-form">
      <input aria-label={`Ollama name for ${row.modelId}`} value={name} onChange={(e) => setName(e.target.value)} />
      <button type="button" onClick={() => void pull()} disabled={pullState.pending || (p !== undefined && !p.done)}>
        Serve this (pull)
      </button>
      {p && (
        <span className="muted" data-testid="pull-progress">
          {p.error ? `Failed: ${p.error}` : p.done ? 'Pulled' : `${p.status}${p.total > 0 ? ` ${fmtPercent(p.completed / p.total, 0)}` : ''}`}
        </span>
      )}
      {p?.notAnnounced?.code === 'tag_not_network_model' && (
        <span className="muted" role="status" data-testid="pull-not-announced">
          {p.notAnnounced.text}
        </span>
      )}
      <ErrorText error={pullState.error} />
    </div>
  );
}

export function DemandCard() {
  const fetched = useFetch(() => getBridge().invoke('demand.list', {}), []);
  const [view, setView] = useState<DemandView | undefined>(undefined);
  const v = view ?? fetched.data;
  const pulling = v?.pulls.some((p) => !p.done) ?? false;
  useEffect(() => {
    if (!pulling) return;
    const t = setInterval(
      () =>
        void getBridge()
          .invoke('demand.list', {})
          .then(setView, () => {}),
      1000,
    );
    return () => clearInterval(t);
  }, [pulling]);
  return (
    <Card title="What the network pays for" testId="demand-card">
      <ErrorText error={fetched.error} />
      {v && (
        <>
          <p className="muted">
            Payout per 1M tokens{v.rates.asOf ? `, as of ${fmtDateTime(v.rates.asOf)}` : ''}
            {v.rates.stale ? ' (stale)' : ''}. GPU memory here: {v.vramGb === null ? 'no GPU found' : fmtGb(v.vramGb)}.
          </p>
          {v.rows.length === 0 ? (
            <p className="empty">{v.rates.error ? `The network's rates are unavailable: ${v.rates.error}` : 'The network lists no paid models right now.'}</p>
          ) : (
            <DataTable
              testId="demand-table"
              columns={[
                { label: 'Model' },
                { label: 'In / 1M', num: true },
                { label: 'Out / 1M', num: true },
                { label: 'Fits this GPU' },
                { label: 'Here' },
                { label: 'Action', srOnly: true },
              ]}
            >
              {v.rows.map((r) => (
                <tr key={r.modelId} data-here={r.here}>
                  <ModelCell model={r.modelId} />
                  <td className="num">{fmtMoney(r.inputPerM)}</td>
                  <td className="num">{fmtMoney(r.outputPerM)}</td>
                  <td data-testid="demand-fit">{fitText(r)}</td>
                  <td>
                    {HERE[r.here]}
                    {r.local && <span className="muted mono"> as {r.local.model}</span>}
                  </td>
                  <td>
                    <ServeThis row={r} view={v} onView={setView} />
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </>
      )}
    </Card>
  );
}
