// Shown where the owner made a change the agent holds for their approval (OWNER_CONFIRMATION_REQUIRED): the
// provider key to a new host or over plain ws:// / http://, a new gateway key, an engine outside this
// network. It names what would happen and where to approve it — the desktop app's dialog, or the agent's
// terminal / `swan-provider approve CODE` for a headless agent — and reports how it ended. The page cannot
// approve. A form that lets the owner prove it another way (the provider key typed again) goes inside it.
import { useEffect, useRef, useState } from 'react';
import type { ApprovalView, OwnerConfirmation } from '../../shared/bridge-error';
import { getBridge } from '../bridge';
import { waitForApproval } from '../bridge/approvals';

const ENDED: Record<Exclude<ApprovalView['status'], 'approved'>, string> = {
  denied: 'You denied it: nothing was changed.',
  expired: 'It was not approved in time: nothing was changed. Try again to get a new approval.',
  failed: 'It was approved, but the change failed.',
};

export function KeyDestinationConfirm({
  confirmation,
  onDone,
  onCancel,
  children,
  retypeHint = 'Or type your provider key again with the change.',
}: {
  confirmation: OwnerConfirmation;
  onDone: (v: ApprovalView) => void;
  onCancel: () => void;
  /** Another way to allow it, shown first (e.g. the provider key typed again). */
  children?: React.ReactNode;
  /** The sentence after where to approve, for a headless agent ('' for none). */
  retypeHint?: string;
}) {
  const [ended, setEnded] = useState<ApprovalView | null>(null);
  const ref = useRef<HTMLDivElement>(null);
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
    // In view where the owner acted, and read out: it asks for something, so nothing may hide it.
    ref.current?.scrollIntoView({ block: 'nearest', behavior: 'auto' });
    ref.current?.focus({ preventScroll: true });
    return () => ac.abort();
    // One wait per approval (onDone may be a new function on every render).
  }, [confirmation.approvalId]);
  const desktop = getBridge().transport === 'ipc';
  return (
    <div
      className="approval"
      role="alertdialog"
      aria-labelledby={`approval-${confirmation.approvalId}`}
      tabIndex={-1}
      ref={ref}
      data-testid="key-destination-confirm"
    >
      <p id={`approval-${confirmation.approvalId}`} className="approval-title">
        <strong>Needs your approval:</strong> {confirmation.summary}
      </p>
      {confirmation.hosts.length > 0 && (
        <p className="approval-hosts">
          {confirmation.hosts.map((h) => (
            <code key={h}>{h}</code>
          ))}
        </p>
      )}
      {confirmation.insecure.length > 0 && (
        <p className="warn-text" data-testid="key-destination-insecure">
          <strong>Insecure:</strong> the connection to {confirmation.insecure.join(', ')} is plain <code>ws://</code>/<code>http://</code>, not encrypted.
          Anyone on the network path can read the key and the traffic. Prefer <code>wss://</code>/<code>https://</code>.
        </p>
      )}
      {children}
      {desktop ? (
        <p>{children ? 'Or approve' : 'Approve'} or deny it in the dialog the app shows.</p>
      ) : (
        <p>
          {children ? 'Or approve it' : 'Approve it'} at the machine where the agent runs: type{' '}
          <code data-testid="owner-approval-code">approve {confirmation.code}</code> in the agent&apos;s terminal, or run{' '}
          <code className="selectable" data-testid="owner-approval-command">
            {confirmation.approveCommand}
          </code>
          .{!children && retypeHint ? ` ${retypeHint}` : ''}
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
