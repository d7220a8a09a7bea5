// What the agent found on this machine: GPUs and engines, and a form to add an engine by address.
import { useState } from 'react';
import type { OwnerConfirmation } from '../../shared/bridge-error';
import type { EngineInfo, GpuInventory } from '../../shared/types';
import { getBridge } from '../bridge';
import { unlessHeld } from '../bridge/approvals';
import { fmtAgo } from '../lib/format';
import { useCall } from '../lib/use-call';
import { setEngines, setSettings, setSnapshot } from '../store/actions';
import { useStore } from '../store/store';
import { Badge } from './Badge';
import { ErrorText, StatusNote, TextField } from './Field';
import { KeyDestinationConfirm } from './KeyDestinationConfirm';
import { BusyButton } from './BusyButton';

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
          installed and that its tool runs in a terminal. Without a GPU you can still serve models from an engine elsewhere on your network: add its address
          under Engines &amp; models.
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

const ORIGIN: Record<EngineInfo['origin'], string> = { probe: 'port probe', owner: 'added by you', config: 'models.json' };

/** Remove, for an address added in the console (an address from config.toml or models.json is removed there). */
function RemoveEngine({ url }: { url: string }) {
  const [remove, state] = useCall(async () => {
    setEngines(await getBridge().invoke('engines.removeEndpoint', { url }));
    setSettings(await getBridge().invoke('settings.get', {}));
    setSnapshot(await getBridge().invoke('snapshot.get', {}));
  });
  return (
    <>
      <BusyButton
        className="small-button danger"
        onClick={() => void remove()}
        aria-label={`Remove the engine at ${url}`}
        data-testid="engine-remove"
        busy={state.pending}
        busyLabel="Removing…"
      >
        Remove
      </BusyButton>
      <ErrorText error={state.error} />
    </>
  );
}

export function EngineList({ engines }: { engines: EngineInfo[] }) {
  const added = useStore((s) => s.settings?.addedEndpoints);
  const discovery = useStore((s) => s.snapshot?.discovery);
  if (engines.length === 0) {
    return (
      <p className="empty" data-testid="no-engine">
        {discovery === false
          ? 'No engine yet. Discovery is off on this agent, so only the addresses you add (and models.json) are checked: add your engine by its address.'
          : 'No engine found on the default ports (vLLM 8000, SGLang 30000, Ollama 11434, llama.cpp 8080, LM Studio 1234, Jan 1337, TGI 3000). Start one, then press Rescan, or add its address.'}
      </p>
    );
  }
  const removable = new Set(added ?? []);
  return (
    <ul className="engine-list" data-testid="engine-list">
      {engines.map((e) => (
        <li key={e.url} className="engine-item" data-testid="engine-row" data-reachable={e.reachable}>
          <div className="engine-main">
            <span className="mono break engine-url">{e.url}</span>
            <span className="engine-type">
              {e.type}
              {e.version ? <span className="muted"> {e.version}</span> : null}
            </span>
            {e.reachable ? <Badge tone="ok">reachable</Badge> : <Badge tone="bad">not answering</Badge>}
          </div>
          <div className="engine-detail small">
            <span className="mono break">{e.models.join(', ') || 'no models'}</span>
            <span className="muted">
              {ORIGIN[e.origin]}
              {e.lastSeen && e.reachable ? ` · seen ${fmtAgo(e.lastSeen)}` : ''}
            </span>
          </div>
          {!e.reachable && e.error && <div className="small error-text">{e.error}</div>}
          {removable.has(e.url) && (
            <div className="engine-actions">
              <RemoveEngine url={e.url} />
            </div>
          )}
        </li>
      ))}
    </ul>
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
      <BusyButton onClick={() => void rescan()} data-testid="rescan-button" busy={state.pending} busyLabel="Scanning…">
        Rescan
      </BusyButton>
      <StatusNote text={summary} testId="rescan-result" />
      <ErrorText error={state.error} />
    </>
  );
}

export function AddEndpointForm() {
  const [url, setUrl] = useState('');
  const [model, setModel] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [held, setHeld] = useState<OwnerConfirmation | null>(null);
  const [add, state] = useCall(async () => {
    setHeld(null);
    const { held: waits, value: engines } = await unlessHeld(
      getBridge().invoke('engines.addEndpoint', { url: url.trim(), ...(model.trim() ? { model: model.trim() } : {}) }),
    );
    if (waits) {
      // An address outside this machine and the owner's network needs the owner's approval first.
      setHeld(waits);
      return;
    }
    setEngines(engines);
    setSettings(await getBridge().invoke('settings.get', {}));
    const typed = url.trim();
    const base = (/^https?:\/\//i.test(typed) ? typed : `http://${typed}`).replace(/\/+$/, '').replace(/\/v1$/, '');
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
    <>
      <form
        className="inline-form"
        data-testid="add-endpoint-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          setDone(null);
          void add();
        }}
      >
        <TextField
          label="Engine address"
          hint="HOST:PORT or a URL, for example 127.0.0.1:8000 or http://192.168.1.20:11434"
          error={state.error}
          inputMode="url"
          autoComplete="off"
          spellCheck={false}
          value={url}
          onChange={setUrl}
          placeholder="127.0.0.1:8000"
          inputTestId="endpoint-url"
        />
        <TextField
          label="Model (optional)"
          hint="Only this model from that engine; leave empty for all of them."
          value={model}
          onChange={setModel}
          inputTestId="endpoint-model"
          autoComplete="off"
          spellCheck={false}
        />
        <div className="form-actions">
          <BusyButton type="submit" disabled={!url.trim()} data-testid="endpoint-add" busy={state.pending} busyLabel="Checking…">
            Add engine
          </BusyButton>
          <StatusNote text={done} testId="endpoint-result" />
        </div>
      </form>
      {held && (
        <KeyDestinationConfirm
          confirmation={held}
          retypeHint=""
          onDone={(v) => {
            if (v.status !== 'approved') return;
            setHeld(null);
            setDone('Added once you approved it; the engine list follows.');
            void getBridge().invoke('settings.get', {}).then(setSettings);
          }}
          onCancel={() => setHeld(null)}
        />
      )}
    </>
  );
}
