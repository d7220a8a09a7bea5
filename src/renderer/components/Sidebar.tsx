import { go, type Page } from '../lib/route';
import { useStore } from '../store/store';
import { linkBadge } from '../lib/serving-state';
import { LINK_LABEL, LINK_TONE } from './Badge';

const ITEMS: { page: Page; label: string }[] = [
  { page: 'dashboard', label: 'Dashboard' },
  { page: 'requests', label: 'Requests' },
  { page: 'usage', label: 'Usage & earnings' },
  { page: 'fleet', label: 'Fleet' },
  { page: 'engines', label: 'Engines & models' },
  { page: 'logs', label: 'Logs' },
  { page: 'settings', label: 'Settings' },
];

export function Sidebar({ page, transport }: { page: Page; transport: 'ipc' | 'websocket' }) {
  const snapshot = useStore((s) => s.snapshot);
  const state = snapshot?.link.state ?? 'idle';
  const paused = snapshot?.pause.paused ?? false;
  return (
    <nav className="sidebar" aria-label="Main">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span>Swan Provider</span>
      </div>
      <ul>
        {ITEMS.map((it) => (
          <li key={it.page}>
            <button type="button" className="nav-item" aria-current={page === it.page ? 'page' : undefined} onClick={() => go(it.page)} data-testid={`nav-${it.page}`}>
              {it.label}
            </button>
          </li>
        ))}
      </ul>
      <div className="sidebar-foot">
        <div className={`link-dot tone-${snapshot ? linkBadge(snapshot).tone : paused ? 'warn' : LINK_TONE[state]}`} data-testid="sidebar-link-state" data-state={state}>
          <span aria-hidden="true" className="dot" />
          {snapshot ? linkBadge(snapshot).label : LINK_LABEL[state]}
        </div>
        {snapshot && (
          <div className="muted small">
            {snapshot.nodeName || 'unnamed node'} · v{snapshot.version}
          </div>
        )}
        <div className="muted small">{transport === 'ipc' ? 'Desktop app' : 'Browser console'}</div>
      </div>
    </nav>
  );
}
