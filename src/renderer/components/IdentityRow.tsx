// Settings: a read-only line saying which node this is and where its key comes from (made here,
// reused from the Go computing-provider, or migrated from this app's earlier key).
import type { AgentSnapshot } from '../../shared/views/snapshot';
import { useStore } from '../store/store';

type Identity = NonNullable<AgentSnapshot['identity']>;

export function identityText(id: Identity): string {
  switch (id.source) {
    case 'computing-provider':
      return `Reused from the Go computing-provider (${id.from ?? 'its private_key'}), so the network sees the same node. Kept in ${id.file}.`;
    case 'migrated':
      return `Migrated from this app's earlier key (kept as ${id.from ?? 'a .bak file'}). Kept in ${id.file}.`;
    case 'generated':
      return `Made on this machine. Kept in ${id.file}; back it up to keep this node after a reinstall.`;
    default:
      return `Kept in ${id.file}.`;
  }
}

export function IdentityRow() {
  const snapshot = useStore((s) => s.snapshot);
  if (!snapshot) return null;
  return (
    <div className="field" data-testid="field-identity">
      <strong>Node identity</strong>
      <code data-testid="identity-node-id" title={snapshot.nodeId}>
        {snapshot.nodeId.slice(0, 18)}…
      </code>
      {snapshot.identity && (
        <p className="field-hint" data-testid="identity-source">
          {identityText(snapshot.identity)}
        </p>
      )}
    </div>
  );
}
