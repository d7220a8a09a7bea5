// Shown when the agent holds a change for the owner's approval (OWNER_CONFIRMATION_REQUIRED): the provider
// key to a new host or over plain ws:// / http://, a new gateway key, an engine outside this network. It
// names what would happen and where to approve it — the desktop app's dialog, or the agent's terminal /
// `swan-provider approve CODE` for a headless agent — and reports how it ended. The page cannot approve.
import { useEffect, useState } from 'react';
import type { ApprovalView, OwnerConfirmation } from '../../shared/bridge';
import { getBridge } from '../bridge';
import { waitForApproval } from '../bridge/approvals';

const ENDED: Record<Exclude<ApprovalView['status'], 'approved'>, string> = {
  denied: 'You denied it: nothing was changed.',
  expired: 'It was not approved in time: nothing was changed. Try again to get a new approval.',
  failed: 'It was approved, but the change failed.',
};

export function KeyDestinationConfirm({ confirmation, onDone, onCancel }: { confirmation: OwnerConfirmation; onDone: (v: ApprovalView) => void; onCancel: () => void }) {
  const [ended, setEnded] = useState<ApprovalView | null>(null);
  useEffect(() => {
    const ac = new AbortController();
    setEnded(null);
    waitForApproval(confirmation, ac.signal).then(
      (v) => {
        setEnded(v);
        onDone(v);
      },
      () => undefined,
    );
    return () => ac.abort();
    // One wait per approval (onDone may be a new function on every render).
  }, [confirmation.approvalId]);
  const desktop = getBridge().transport === 'ipc';
  return (
    <div className="banner banner-warn" role="alertdialog" aria-labelledby="owner-approval-title" data-testid="key-destination-confirm">
      <p id="owner-approval-title">
        <strong>Waiting for your approval:</strong> {confirmation.summary}
      </p>
      {confirmation.hosts.length > 0 && (
        <p>
          {confirmation.hosts.map((h) => (
            <code key={h}>{h}</code>
          ))}
        </p>
      )}
      {confirmation.insecure.length > 0 && (
        <p data-testid="key-destination-insecure">
          <strong>Insecure:</strong> the connection to {confirmation.insecure.join(', ')} is plain <code>ws://</code>/<code>http://</code>, not encrypted. Anyone on the network path can
          read the key and the traffic. Prefer <code>wss://</code>/<code>https://</code>.
        </p>
      )}
      {desktop ? (
        <p>Approve or deny it in the dialog the app shows.</p>
      ) : (
        <p>
          Only someone at the machine where the agent runs can approve it: type <code data-testid="owner-approval-code">approve {confirmation.code}</code> in the agent&apos;s terminal, or run{' '}
          <code className="selectable" data-testid="owner-approval-command">
            {confirmation.approveCommand}
          </code>
          . Or type your provider key again with the change.
        </p>
      )}
      {ended && ended.status !== 'approved' && (
        <p className="error-text" role="alert" data-testid="owner-approval-ended">
          {ENDED[ended.status]}
          {ended.error ? ` ${ended.error}` : ''}
        </p>
      )}
      <div className="form-actions">
        <button type="button" onClick={onCancel} data-testid="key-destination-cancel">
          Close
        </button>
      </div>
    </div>
  );
}
