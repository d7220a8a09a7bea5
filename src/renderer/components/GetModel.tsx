// "Get a model": from a GPU to a served model in one card. What this GPU should serve (the network's
// catalogue and demand, this GPU's memory, our fit estimate: fits / too large / unknown, never unknown as
// fits), a verified download from the network's model repository with live progress and Cancel, then Serve:
// the agent starts an engine for it (llama.cpp's llama-server) and announces it under its catalogue id.
// The engines the agent runs are listed below with their state and a Stop. "Serving" itself is the
// verdict's word (the Dashboard, the sidebar): this card says only what the engine does.
import { useEffect, useState } from 'react';
import type { ManagedEngineView, ModelDownloadView, RecommendRowView, RecommendView } from '../../shared/views/managed';
import { getBridge } from '../bridge';
import { Badge, type Tone } from './Badge';
import { Card } from './Card';
import { DataTable, ModelCell } from './DataTable';
import { ErrorText } from './Field';
import { fmtBytes, fmtInt, fmtMoney, fmtTimeLeft } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { modelSlug } from './ModelsTable';

const FIT_TONE = { fits: 'ok', too_large: 'bad', unknown: 'muted' } as const;
const FIT_LABEL = { fits: 'Fits', too_large: 'Too large', unknown: 'Unknown' } as const;

function FitCell({ r }: { r: RecommendRowView }) {
  const need = r.needBytes !== undefined ? `needs ${fmtBytes(r.needBytes)}${r.basis === 'network' ? ' (the network says)' : r.exact ? '' : ' (estimate)'}` : '';
  return (
    <td data-testid={`fit-${modelSlug(r.modelId)}`} data-fit={r.fit} data-code={r.fitCode}>
      <Badge tone={FIT_TONE[r.fit]}>{FIT_LABEL[r.fit]}</Badge>
      <div className="small muted">
        {r.fit === 'unknown' ? (r.fitReason ?? 'Not enough is known to tell.') : `${need} for ${fmtInt(r.contextLength)} tokens × ${r.slots} slot(s)`}
      </div>
    </td>
  );
}

const ON_DISK: Record<RecommendRowView['onDisk'], string> = {
  verified: 'on disk, verified against the network’s hashes',
  hashed: 'on disk, hashed here (the network published no hash to check)',
  partial: 'partly downloaded',
  none: '',
};

function Progress({ d, onCancel, cancelling }: { d: ModelDownloadView; onCancel: () => void; cancelling: boolean }) {
  const pct = d.totalBytes > 0 ? Math.floor((d.doneBytes / d.totalBytes) * 100) : 0;
  const what =
    d.phase === 'listing'
      ? 'Reading the file list…'
      : d.phase === 'checking'
        ? 'Checking the disk…'
        : `${fmtBytes(d.doneBytes)} of ${fmtBytes(d.totalBytes)} · ${pct}% · ${fmtBytes(d.rateBytesPerSec)}/s · ${fmtTimeLeft(d.etaSeconds)}`;
  return (
    <div className="small" data-testid={`download-progress-${modelSlug(d.modelId)}`} data-phase={d.phase}>
      <progress max={100} value={pct} aria-label={`Download of ${d.modelId}`} />
      <div className="muted">{what}</div>
      <button type="button" className="small-button" onClick={onCancel} disabled={cancelling} data-testid={`download-cancel-${modelSlug(d.modelId)}`}>
        Cancel
      </button>
    </div>
  );
}

function Finished({ d }: { d: ModelDownloadView }) {
  const s = modelSlug(d.modelId);
  if (d.phase === 'verified')
    return (
      <div className="small" data-testid={`download-done-${s}`} data-phase="verified">
        Downloaded; every file matched the network’s hash.
      </div>
    );
  if (d.phase === 'hashed')
    return (
      <div className="small" data-testid={`download-done-${s}`} data-phase="hashed">
        Downloaded and hashed here; the network published no hash for some files, so they were not checked.
      </div>
    );
  if (d.phase === 'cancelled')
    return (
      <div className="small muted" data-testid={`download-done-${s}`} data-phase="cancelled">
        Cancelled. What arrived is kept: Download again resumes from it.
      </div>
    );
  return (
    <div className="small error-text" role="alert" data-testid={`download-done-${s}`} data-phase="failed" data-code={d.code}>
      Download failed: {d.error} Try again, or check the models folder’s disk.
    </div>
  );
}

function Row({
  r,
  download,
  engine,
  busy,
  act,
}: {
  r: RecommendRowView;
  download?: ModelDownloadView;
  engine?: ManagedEngineView;
  busy: boolean;
  act: (verb: 'download' | 'cancel' | 'serve', id: string) => void;
}) {
  const s = modelSlug(r.modelId);
  const running = download && !download.finishedAt;
  const onDisk = r.onDisk === 'verified' || r.onDisk === 'hashed' || download?.phase === 'verified' || download?.phase === 'hashed';
  return (
    <tr data-testid={`recommend-row-${s}`} data-on-disk={onDisk ? 'yes' : r.onDisk}>
      <ModelCell model={r.modelId}>{r.name && r.name !== r.modelId ? <div className="small muted">{r.name}</div> : null}</ModelCell>
      <FitCell r={r} />
      <td className="num" data-testid={`earn-${s}`}>
        {r.earnHereDaily === null ? <span className="muted">no figure</span> : `${fmtMoney(r.earnHereDaily)} / day`}
        {r.requests24h !== null && (
          <div className="small muted">
            {fmtInt(r.requests24h)} requests in 24 h{r.demandTrend ? `, ${r.demandTrend}` : ''}
          </div>
        )}
      </td>
      <td className="small">
        {r.inRepository ? fmtBytes(r.sizeBytes) : <span className="muted">not in the model repository</span>}
        {ON_DISK[r.onDisk] && <div className="muted">{ON_DISK[r.onDisk]}</div>}
      </td>
      <td>
        {running ? (
          <Progress d={download} onCancel={() => act('cancel', r.modelId)} cancelling={busy} />
        ) : engine ? (
          <span className="small muted">An engine runs it (below).</span>
        ) : onDisk ? (
          <button
            type="button"
            onClick={() => act('serve', r.modelId)}
            disabled={busy || r.fit === 'too_large'}
            title={r.fit === 'too_large' ? 'It does not fit this GPU’s memory.' : undefined}
            data-testid={`serve-${s}`}
          >
            Serve
          </button>
        ) : r.inRepository ? (
          <button
            type="button"
            onClick={() => act('download', r.modelId)}
            disabled={busy || r.fit === 'too_large'}
            title={r.fit === 'too_large' ? 'It does not fit this GPU’s memory.' : undefined}
            data-testid={`download-${s}`}
          >
            Download
          </button>
        ) : null}
        {download?.finishedAt && <Finished d={download} />}
      </td>
    </tr>
  );
}

const PHASE: Record<ManagedEngineView['phase'], { label: string; tone: Tone }> = {
  starting: { label: 'Starting', tone: 'info' },
  serving: { label: 'Engine answers', tone: 'ok' },
  restarting: { label: 'Restarting', tone: 'warn' },
  failed: { label: 'Failed', tone: 'bad' },
  stopped: { label: 'Stopped', tone: 'muted' },
};

function ManagedList({ engines, onStop, busy }: { engines: ManagedEngineView[]; onStop: (id: string) => void; busy: boolean }) {
  if (engines.length === 0)
    return (
      <p className="empty small" data-testid="managed-empty">
        This agent runs no engine yet: Serve a downloaded model above, or run `swan-provider models serve`.
      </p>
    );
  return (
    <DataTable testId="managed-table" columns={[{ label: 'Announced as' }, { label: 'Engine' }, { label: 'State' }, { label: 'Stop', srOnly: true }]}>
      {engines.map((e) => (
        <tr key={e.id} data-testid={`managed-row-${modelSlug(e.id)}`} data-phase={e.phase}>
          <ModelCell model={e.id}>
            {e.weights && (
              <div className="small muted mono" title={e.weights}>
                {e.weights}
              </div>
            )}
          </ModelCell>
          <td className="small">
            {e.backend}
            {e.url && <div className="mono muted">{e.url}</div>}
          </td>
          <td>
            <Badge tone={PHASE[e.phase].tone}>{PHASE[e.phase].label}</Badge>
            {e.restarts > 0 && <div className="small muted">restarted {e.restarts} time(s) after a crash</div>}
            {e.lastError && (
              <div className="small error-text" data-code={e.code}>
                {e.lastError}
              </div>
            )}
          </td>
          <td>
            <button type="button" className="small-button" onClick={() => onStop(e.id)} disabled={busy} data-testid={`managed-stop-${modelSlug(e.id)}`}>
              Stop
            </button>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export function GetModelCard() {
  const rec = useFetch<RecommendView>(() => getBridge().invoke('models.recommend', {}), []);
  const [downloads, setDownloads] = useState<ModelDownloadView[]>([]);
  const [engines, setEngines] = useState<ManagedEngineView[]>([]);
  const refresh = async (): Promise<void> => {
    const [d, e] = await Promise.all([getBridge().invoke('downloads.list', {}), getBridge().invoke('managed.list', {})]);
    setDownloads(d);
    setEngines(e);
  };
  const active = downloads.some((d) => !d.finishedAt) || engines.some((e) => e.phase === 'starting' || e.phase === 'restarting');
  const [act, actState] = useCall(async (verb: 'download' | 'cancel' | 'serve' | 'stop', id: string) => {
    if (verb === 'download') setDownloads(await getBridge().invoke('downloads.start', { modelId: id }));
    if (verb === 'cancel') setDownloads(await getBridge().invoke('downloads.cancel', { modelId: id }));
    if (verb === 'serve') setEngines(await getBridge().invoke('managed.serve', { id }));
    if (verb === 'stop') setEngines(await getBridge().invoke('managed.stop', { id }));
  });
  useEffect(() => {
    void refresh().catch(() => undefined);
  }, []);
  // While something moves (bytes arriving, an engine starting), the card follows it every second.
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => void refresh().catch(() => undefined), 1000);
    return () => clearInterval(t);
  }, [active]);
  const v = rec.data;
  return (
    <Card
      title="Get a model"
      testId="get-model-card"
      actions={
        <button type="button" className="small-button" onClick={rec.reload} disabled={rec.loading}>
          Refresh
        </button>
      }
    >
      {rec.loading && !v && <p className="muted">Reading the network’s models and demand…</p>}
      <ErrorText error={rec.error} />
      {v && (
        <>
          <p className="muted small" data-testid="recommend-gpu">
            {v.gpu}. Models are downloaded into <span className="mono">{v.modelsDir}</span> from <span className="mono">{v.serviceUrl}</span>.
          </p>
          {v.notes.length > 0 && (
            <ul className="plain-list small muted" data-testid="recommend-notes">
              {v.notes.map((n) => (
                <li key={n}>{n}</li>
              ))}
            </ul>
          )}
          {v.rows.length === 0 ? (
            <p className="empty">The network lists no models right now. Check the network address in Settings, then Refresh.</p>
          ) : (
            <DataTable
              testId="recommend-table"
              columns={[
                { label: 'Model' },
                { label: 'Fits this GPU' },
                { label: 'Earns here', num: true },
                { label: 'Size' },
                { label: 'Action', srOnly: true },
              ]}
            >
              {v.rows.map((r) => (
                <Row
                  key={r.modelId}
                  r={r}
                  download={downloads.find((d) => d.modelId === r.modelId)}
                  engine={engines.find((e) => e.id === r.modelId)}
                  busy={actState.pending}
                  act={(verb, id) => void act(verb, id).then(refresh)}
                />
              ))}
            </DataTable>
          )}
          <p className="small muted">Earnings are the network’s own estimate for a provider joining now; they are not a promise.</p>
        </>
      )}
      <ErrorText error={actState.error} testId="get-model-error" />
      <h3>Engines this agent runs</h3>
      <ManagedList engines={engines} onStop={(id) => void act('stop', id).then(refresh)} busy={actState.pending} />
    </Card>
  );
}
