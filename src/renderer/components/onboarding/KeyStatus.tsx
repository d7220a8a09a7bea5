// What the hub's provider status says about a key: its status, where the provider is in the network's
// own registration (its steps are not this setup's steps, so they are named as the network's) and the
// next steps the hub lists (GET /api/v1/provider/status, through settings.checkKey).
import type { KeyStatusDetailView } from '../../../shared/views/settings';
import { registrationStep } from '../../lib/network';
import { Badge } from '../Badge';

export function KeyStatus({ detail }: { detail: KeyStatusDetailView }) {
  const waiting = detail.canConnect === false;
  const step = registrationStep(detail);
  return (
    <div className="key-status" data-testid="key-status" data-can-connect={detail.canConnect === undefined ? 'unknown' : String(detail.canConnect)}>
      <p>
        {detail.status && (
          <Badge tone={waiting ? 'warn' : 'ok'} testId="key-status-badge">
            {detail.status}
          </Badge>
        )}{' '}
        {step && <span data-testid="key-step">{step}</span>}
      </p>
      {waiting && (
        <p className="warn-text">
          The hub does not take connections from this key yet. The agent checks again by itself; nothing to do here once the steps below are done.
        </p>
      )}
      {detail.warning && (
        <p className="warn-text" data-testid="key-warning">
          {detail.warning}
        </p>
      )}
      {detail.nextSteps.length > 0 && (
        <>
          <p className="small muted">Next steps:</p>
          <ol className="next-steps" data-testid="key-next-steps">
            {detail.nextSteps.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ol>
        </>
      )}
    </div>
  );
}
