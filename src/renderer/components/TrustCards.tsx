// What the hub made of this node and what the node can prove: the announced models the hub did not
// register (they get no requests), its upgrade advice, and each served model's weights — hashed once, with
// progress while that runs ("verifying weights: 7.2 of 14.9 GB"), the composite the hub is told, or why a
// model's files cannot be found. Plain text only: the hub's words are never read as markup.
import type { HubViewState, ModelWeightsView, WeightsView } from '../../shared/types';
import { isoTime } from '../../shared/dates';
import { fmtDateTime } from '../lib/format';
import { useStore } from '../store/store';
import { Badge } from './Badge';
import { Card } from './Card';
import { go } from '../lib/route';

/** "7.2 of 14.9 GB", or MB below a gigabyte. */
export function sizeProgress(done: number, total: number): string {
  if (total >= 1e9) return `${(done / 1e9).toFixed(1)} of ${(total / 1e9).toFixed(1)} GB`;
  return `${Math.round(done / 1e6)} of ${Math.round(total / 1e6)} MB`;
}

function HubView({ view }: { view: HubViewState | undefined }) {
  if (!view || (view.notRegistered.length === 0 && !view.upgrade)) return null;
  const up = view.upgrade;
  return (
    <Card title="What the hub registered" testId="hub-view-card">
      {view.notRegistered.length > 0 && (
        <div className="banner banner-warn" data-testid="hub-not-registered">
          <p>
            The hub did not register {view.notRegistered.length === 1 ? 'this model' : 'these models'}, so no requests come for{' '}
            {view.notRegistered.length === 1 ? 'it' : 'them'}:
          </p>
          <ul>
            {view.notRegistered.map((m) => (
              <li key={m} className="mono" data-testid="hub-not-registered-model">
                {m}
              </li>
            ))}
          </ul>
          <p className="small">
            Use model ids the network&apos;s catalogue lists (map a local name to a catalogue id in models.json), and read the notices from Swan Inference.
          </p>
        </div>
      )}
      {up && (
        <p className="banner banner-info" data-testid="hub-upgrade">
          The hub advises an upgrade{up.latest ? `: provider release ${up.latest} is current` : ''}
          {up.running ? ` (this node speaks ${up.running})` : ''}.{up.message ? ` ${up.message}` : ''} The agent checked this app&apos;s release channel;
          Settings → About shows what it found, downloads and verifies it.{' '}
          <button type="button" className="small-button" onClick={() => go('settings')} data-testid="hub-upgrade-open">
            See the update
          </button>{' '}
          <time className="muted small" dateTime={isoTime(up.at)}>
            {fmtDateTime(up.at)}
          </time>
        </p>
      )}
    </Card>
  );
}

// "verified" is said only of weights checked against the network's hashes; these are hashed here (sha256 of
// the files, or a Go node's manifest), which is what a fingerprint challenge is answered from.
const STATE: Record<ModelWeightsView['state'], { tone: 'ok' | 'info' | 'warn' | 'bad' | 'muted'; text: string }> = {
  verified: { tone: 'ok', text: 'hashed' },
  hashing: { tone: 'info', text: 'hashing' },
  queued: { tone: 'muted', text: 'queued' },
  unlocated: { tone: 'muted', text: 'not provable here' },
  failed: { tone: 'bad', text: 'unreadable' },
};

function WeightsRow({ w }: { w: ModelWeightsView }) {
  const s = STATE[w.state];
  return (
    <li data-testid="weights-model" data-model={w.model} data-state={w.state}>
      <div>
        <strong className="mono">{w.model}</strong>{' '}
        <Badge tone={s.tone} testId="weights-state">
          {s.text}
        </Badge>
      </div>
      {(w.state === 'hashing' || w.state === 'queued') && (
        <div className="small" data-testid="weights-progress">
          <progress max={w.totalBytes || 1} value={w.doneBytes} aria-label={`weights of ${w.model}`} /> hashing weights:{' '}
          {sizeProgress(w.doneBytes, w.totalBytes)}
        </div>
      )}
      {w.state === 'verified' && w.compositeHash && (
        <div className="small muted">
          {w.files} file{w.files === 1 ? '' : 's'}, {sizeProgress(w.totalBytes, w.totalBytes).replace(/^.* of /, '')}
          {w.source === 'go-manifest' ? ' (from the Go node’s manifest)' : ' hashed here, not checked against the network’s hashes'} · sha256{' '}
          <span className="mono" data-testid="weights-hash" title={w.compositeHash}>
            {w.compositeHash.slice(0, 16)}…
          </span>
        </div>
      )}
      {w.reason && (w.state === 'unlocated' || w.state === 'failed') && (
        <div className="small muted" data-testid="weights-reason">
          {w.reason}. Fingerprint challenges for this model fail until its files are readable here.
        </div>
      )}
    </li>
  );
}

function Weights({ weights }: { weights: WeightsView | undefined }) {
  if (!weights || weights.models.length === 0) return null;
  return (
    <Card title="Model weights" testId="weights-card">
      <ul className="plain-list">
        {weights.models.map((w) => (
          <WeightsRow key={w.model} w={w} />
        ))}
      </ul>
    </Card>
  );
}

/** The cards for a snapshot's hub view and weights (nothing when neither has anything to say). */
export function TrustCardsView({ view, weights }: { view: HubViewState | undefined; weights: WeightsView | undefined }) {
  if (!(view && (view.notRegistered.length > 0 || view.upgrade)) && !weights?.models.length) return null;
  return (
    <div className="grid-2" data-testid="trust-cards">
      <HubView view={view} />
      <Weights weights={weights} />
    </div>
  );
}

export function TrustCards() {
  const view = useStore((s) => s.snapshot?.hubView);
  const weights = useStore((s) => s.snapshot?.weights);
  return <TrustCardsView view={view} weights={weights} />;
}
