// The hub connection: state, the reason when not serving, and Pause/Resume.
import { getBridge } from '../bridge';
import { fmtAgo, fmtTime } from '../lib/format';
import { useCall } from '../lib/use-call';
import { notify, setPause } from '../store/actions';
import { useStore } from '../store/store';
import { linkBadge } from '../lib/serving-state';
import { Badge } from './Badge';
import { Card } from './Card';
import { ErrorText } from './Field';

const PAUSE_CAUSE: Record<string, string> = {
  manual: 'paused by you',
  gpu_busy: 'another program is using the GPU',
  gpu_hot: 'a GPU is over the ceiling you set, cooling down',
  schedule: 'outside the serving schedule',
};

/**
 * When the link left "connected" (kept across redial attempts, which each restart the link's own
 * `since`); null while connected. Module state: one link, one card.
 */
let downSince: number | null = null;
function linkDownSince(state: string, since: number): number | null {
  if (state === 'connected') downSince = null;
  else if (downSince === null) downSince = since;
  return downSince;
}

export function LinkCard() {
  const snapshot = useStore((s) => s.snapshot);
  const [pause, pauseState] = useCall(async () => {
    setPause(await getBridge().invoke('serving.pause', { reason: 'Paused from the console' }));
    notify('info', 'Serving paused: the hub sends no new requests until you resume.');
  });
  const [resume, resumeState] = useCall(async () => {
    setPause(await getBridge().invoke('serving.resume', {}));
    notify('info', 'Serving resumed.');
  });
  const [retry, retryState] = useCall(async () => {
    await getBridge().invoke('link.retry', {});
  });
  if (!snapshot) return null;
  const { link, pause: p } = snapshot;
  const busy = pauseState.pending || resumeState.pending;
  const down = linkDownSince(link.state, link.since);
  const since =
    p.paused && p.since
      ? `paused since ${fmtAgo(p.since)}`
      : link.state === 'connected'
        ? `since ${fmtAgo(link.since)}`
        : down
          ? `down since ${fmtAgo(down)}`
          : '';
  return (
    <Card
      title="Connection"
      testId="link-card"
      actions={
        p.paused ? (
          <button type="button" className="primary" onClick={() => void resume()} disabled={busy} data-testid="resume-button">
            Resume serving
          </button>
        ) : (
          <button type="button" onClick={() => void pause()} disabled={busy} data-testid="pause-button">
            Pause serving
          </button>
        )
      }
    >
      <div className="link-row">
        <Badge tone={linkBadge(snapshot).tone} testId="link-state">
          {linkBadge(snapshot).label}
        </Badge>
        <span className="muted small" data-testid="link-hub">
          {link.hubUrl}
        </span>
        {since && (
          <span className="muted small" data-testid="link-since">
            {since}
          </span>
        )}
      </div>
      {p.paused && (
        <p data-testid="pause-reason">
          Not taking requests: {p.cause ? PAUSE_CAUSE[p.cause] : 'paused'}
          {p.reason && p.cause !== 'manual' ? ` (${p.reason})` : ''}.
        </p>
      )}
      {linkBadge(snapshot).nothingToServe && (
        <p className="link-reason" data-testid="nothing-to-serve">
          The hub is connected, but no model is switched on with a working engine, so no requests come in. Start an engine or switch a model on in Engines &amp;
          models.
        </p>
      )}
      {link.state !== 'connected' && link.reason && (
        <p className="link-reason" data-testid="link-reason">
          {link.reason}
        </p>
      )}
      {link.nextRetryAt && link.state !== 'connected' && (
        <p className="muted small">
          Next attempt at {fmtTime(link.nextRetryAt)} (attempt {link.attempts + 1}).{' '}
          <button type="button" className="small-button" onClick={() => void retry()} disabled={retryState.pending} data-testid="link-retry">
            Retry now
          </button>
        </p>
      )}
      <ErrorText error={pauseState.error ?? resumeState.error ?? retryState.error} />
    </Card>
  );
}
