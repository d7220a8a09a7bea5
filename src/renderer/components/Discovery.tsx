// What the agent found on this machine: GPUs and engines, and a form to add an engine by address.
import { useState } from 'react';
import type { EngineInfo, GpuInventory } from '../../shared/types';
import { getBridge } from '../bridge';
import { fmtAgo } from '../lib/format';
import { useCall } from '../lib/use-call';
import { setEngines } from '../store/actions';
import { useStore } from '../store/store';
import { Badge } from './Badge';
import { ErrorText, StatusNote, TextField } from './Field';
import { DataTable } from './DataTable';

export function GpuList({ inventory }: { inventory: GpuInventory }) {
  if (inventory.gpus.length === 0) {
    const rest = inventory.note?.replace(/^No GPU found[:.]?\s*/i, '').trim();
    // The note's own sentence after "No GPU found:" starts in lower case; shown as its own line, it starts a sentence.
    const detail = rest ? rest.charAt(0).toUpperCase() + rest.slice(1) : rest;
    return (
      <div className="empty" data-testid="no-gpu">
        <strong>No GPU found.</strong>
        {detail && <p>{detail}</p>}
        <p>
          The agent looks for NVIDIA (nvidia-smi), AMD (amd-smi or rocm-smi), Apple Silicon and Intel GPUs. If this machine has one, check that its driver is
          installed and that its tool runs in a terminal. Without a GPU you can still serve models from an engine elsewhere on your network: add its address under
          Engines &amp; models.
        </p>
      </div>
    );
  }
  return (
    <ul className="plain-list" data-testid="gpu-list">
      {inventory.gpus.map((g) => (
        <li key={`${g.index}-${g.uuid ?? ''}`}>
          <strong>
            GPU {g.index}: {g.model}
          </strong>{' '}
          <span className="muted">
            {(g.vramTotalMb / 1024).toFixed(1)} GB{g.sharedMemory ? ' shared' : ''} · {g.vendor}
            {g.driverVersion ? ` · driver ${g.driverVersion}` : ''}
            {g.cudaVersion ? ` · CUDA ${g.cudaVersion}` : ''}
            {g.mig ? ` · MIG ${g.mig.profile}` : ''}
          </span>
        </li>
      ))}
      {inventory.note && <li className="muted small">{inventory.note}</li>}
    </ul>
  );
}

export function EngineList({ engines }: { engines: EngineInfo[] }) {
  if (engines.length === 0) {
    return (
      <p className="empty" data-testid="no-engine">
        No engine found on the default ports (vLLM 8000, SGLang 30000, Ollama 11434, llama.cpp 8080, LM Studio 1234, Jan 1337, TGI 3000). Start one, then press
        Rescan, or add its address below.
      </p>
    );
  }
  return (
    <DataTable testId="engine-list" columns={[{ label: 'Address' }, { label: 'Type' }, { label: 'Models' }, { label: 'State' }, { label: 'Found by' }]}>
        {engines.map((e) => (
          <tr key={e.url} data-testid="engine-row">
            <th scope="row" className="mono">
              {e.url}
            </th>
            <td>
              {e.type}
              {e.version ? <span className="muted"> {e.version}</span> : null}
            </td>
            <td className="small mono">{e.models.join(', ') || '—'}</td>
            <td>
              {e.reachable ? <Badge tone="ok">reachable</Badge> : <Badge tone="bad">unreachable</Badge>}
              {e.error && <div className="small error-text">{e.error}</div>}
              {e.lastSeen && <div className="small muted">seen {fmtAgo(e.lastSeen)}</div>}
            </td>
            <td className="small">{e.origin === 'probe' ? 'port probe' : e.origin === 'owner' ? 'added by you' : 'models.json'}</td>
          </tr>
        ))}
    </DataTable>
  );
}

/** What a rescan did, in plain words: which addresses it probed and what answered. */
export function rescanSummary(engines: EngineInfo[], discovery: boolean | undefined): string {
  const found = engines.filter((e) => e.reachable).length;
  const what = found === 0 ? 'no engine answered' : `${found} engine(s) answered`;
  return discovery === false
    ? `Discovery is off, so only the addresses you added and models.json were probed: ${what}.`
    : `Probed the default engine ports and the addresses you added: ${what}.`;
}

export function RescanButton() {
  const discovery = useStore((s) => s.snapshot?.discovery);
  const [summary, setSummary] = useState<string | null>(null);
  const [rescan, state] = useCall(async () => {
    setSummary(null);
    const engines = await getBridge().invoke('engines.rescan', {});
    setEngines(engines);
    setSummary(rescanSummary(engines, discovery));
  });
  return (
    <>
      <button type="button" onClick={() => void rescan()} disabled={state.pending} data-testid="rescan-button">
        {state.pending ? 'Scanning…' : 'Rescan'}
      </button>
      <StatusNote text={summary} testId="rescan-result" />
      <ErrorText error={state.error} />
    </>
  );
}

export function AddEndpointForm() {
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [add, state] = useCall(async () => {
    const engines = await getBridge().invoke('engines.addEndpoint', { url: url.trim(), ...(model.trim() ? { model: model.trim() } : {}) });
    setEngines(engines);
    const base = url.trim().replace(/\/+$/, '').replace(/\/v1$/, '');
    const e = engines.find((x) => x.url === base);
    setDone(
      e?.reachable
        ? `Added ${base}: ${e.type}${e.version ? ` ${e.version}` : ''} with ${e.models.length} model(s).`
        : `Added ${base}, but no engine answers there yet${e?.error ? ` (${e.error})` : ''}. It is checked again on every rescan.`,
    );
    setUrl('');
    setModel('');
  });
  return (
    <form
      className="inline-form"
      data-testid="add-endpoint-form"
      onSubmit={(e) => {
        e.preventDefault();
        setDone(null);
        void add();
      }}
    >
      <TextField label="Engine address" hint="For example http://127.0.0.1:8000 or http://192.168.1.20:11434" error={state.error} type="url" value={url} onChange={setUrl} required placeholder="http://127.0.0.1:8000" inputTestId="endpoint-url" />
      <TextField label="Model (optional)" hint="Only this model from that engine; leave empty for all of them." value={model} onChange={setModel} inputTestId="endpoint-model" />
      <div className="form-actions">
        <button type="submit" disabled={state.pending || !url.trim()} data-testid="endpoint-add">
          {state.pending ? 'Checking…' : 'Add endpoint'}
        </button>
        <StatusNote text={done} testId="endpoint-result" />
      </div>
    </form>
  );
}
