// The provider's standing on the platform (GET /api/v1/provider/status): approval step, message,
// warning and next steps, and whether the agent connects because of it.
import { registrationStep } from '../lib/network';
import type { ProviderStatusView } from '../../shared/views/snapshot';
import { getBridge } from '../bridge';
import { fmtTime } from '../lib/format';
import { useCall } from '../lib/use-call';
import { setProviderStatus } from '../store/actions';
import { useStore } from '../store/store';
import { Badge, type Tone } from './Badge';
import { Card } from './Card';
import { ErrorText } from './Field';

const STATE: Record<ProviderStatusView['state'], { label: string; tone: Tone }> = {
  checking: { label: 'Checking', tone: 'info' },
  ok: { label: 'Can connect', tone: 'ok' },
  waiting: { label: 'Waiting for approval', tone: 'warn' },
  invalid_key: { label: 'Key not valid', tone: 'bad' },
  unreachable: { label: 'Status unavailable', tone: 'muted' },
  no_key: { label: 'No key yet', tone: 'muted' },
};

function explain(v: ProviderStatusView): string | undefined {
  switch (v.state) {
    case 'invalid_key':
      return 'Not connecting: the platform does not accept this provider key. Copy it again from your Swan Inference provider page into Settings.';
    case 'waiting':
      return `Not connecting yet: the platform says this provider cannot connect${v.status ? ` (status "${v.status}")` : ''}. The agent checks again every minute${v.nextCheckAt ? ` (next at ${fmtTime(v.nextCheckAt)})` : ''}.`;
    case 'unreachable':
      return `The provider status could not be read (${v.error ?? 'no answer'}); the agent connects anyway.`;
    case 'no_key':
      return 'Paste your provider key in Settings to check your provider status.';
    default:
      return undefined;
  }
}

export function ProviderStatusCard() {
  const v = useStore((s) => s.snapshot?.providerStatus);
  const [refresh, state] = useCall(async () => setProviderStatus(await getBridge().invoke('providerStatus.refresh', {})));
  if (!v) return null;
  const s = STATE[v.state];
  const why = explain(v);
  return (
    <Card
      title="Provider status"
      testId="provider-status"
      actions={
        <button
          type="button"
          className="small-button"
          onClick={() => void refresh()}
          disabled={state.pending || v.state === 'checking'}
          data-testid="provider-status-refresh"
        >
          Check again
        </button>
      }
    >
      <div className="link-row">
        <Badge tone={s.tone} testId="provider-status-state">
          {s.label}
        </Badge>
        {v.status && (
          <span className="mono small" data-testid="provider-status-status">
            {v.status}
          </span>
        )}
        {v.totalSteps ? (
          <span className="small" data-testid="provider-status-step">
            {registrationStep({ ...v, step: v.step ?? 0 })}
          </span>
        ) : null}
      </div>
      {why && (
        <p className="link-reason" data-testid="provider-status-why">
          {why}
        </p>
      )}
      {v.message && <p data-testid="provider-status-message">{v.message}</p>}
      {v.warning && (
        <p className="banner banner-warn" data-testid="provider-status-warning">
          {v.warning}
        </p>
      )}
      {v.nextSteps.length > 0 && (
        <>
          <h3>Next steps</h3>
          <ul className="plain-list small" data-testid="provider-status-next-steps">
            {v.nextSteps.map((step) => (
              <li key={step}>{step}</li>
            ))}
          </ul>
        </>
      )}
      {v.earningsEnabled !== undefined && (
        <p className="muted small" data-testid="provider-status-earnings">
          Earnings {v.earningsEnabled ? 'enabled' : 'not enabled yet'}.
        </p>
      )}
      {v.checkedAt && <p className="muted small">Checked at {fmtTime(v.checkedAt)}.</p>}
      <ErrorText error={state.error} />
    </Card>
  );
}
