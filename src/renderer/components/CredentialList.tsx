// The named credentials the owner made (gateway keys, fleet tokens), each with what is known of its use and
// a Revoke button. The secret itself is never listed: it is shown once, when it is made.
export function CredentialList<T extends { name: string }>({
  items,
  empty,
  testId,
  detail,
  onRevoke,
  revoking,
  revokeLabel,
}: {
  items: T[] | undefined;
  /** Said when there is none yet. */
  empty: string;
  testId: string;
  detail: (item: T) => string;
  onRevoke: (name: string) => void;
  revoking: boolean;
  revokeLabel: (name: string) => string;
}) {
  if (!items) return null;
  if (items.length === 0) return <p className="muted small">{empty}</p>;
  return (
    <ul className="plain-list">
      {items.map((t) => (
        <li key={t.name} data-testid={testId}>
          <span className="mono">{t.name}</span> <span className="muted small">{detail(t)}</span>{' '}
          <button type="button" className="small-button danger" onClick={() => onRevoke(t.name)} disabled={revoking} aria-label={revokeLabel(t.name)}>
            Revoke
          </button>
        </li>
      ))}
    </ul>
  );
}
