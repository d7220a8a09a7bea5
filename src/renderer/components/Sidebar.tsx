import { useState } from 'react';
import { go, type Page } from '../lib/route';
import { useStore } from '../store/store';
import { consoleVerdict } from '../lib/summary';
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
  const connection = useStore((s) => s.connection);
  const state = snapshot?.link.state ?? 'idle';
  // The agent's verdict: never a green "Serving" while a model is down, the agent stopped or unreachable.
  const verdict = snapshot ? consoleVerdict(snapshot, connection) : undefined;
  // Narrow windows (phones): the pages fold into a menu under the top bar.
  const [open, setOpen] = useState(false);
  return (
    <nav className={`sidebar${open ? ' is-open' : ''}`} aria-label="Main">
      <div className="brand">
        <span className="brand-mark" aria-hidden="true" />
        <span>Swan Provider</span>
      </div>
      <button type="button" className="menu-button" aria-expanded={open} aria-controls="main-nav" onClick={() => setOpen(!open)} data-testid="nav-menu">
        <span aria-hidden="true">☰</span> Menu
      </button>
      <ul id="main-nav">
        {ITEMS.map((it) => (
          <li key={it.page}>
            <button
              type="button"
              className="nav-item"
              aria-current={page === it.page ? 'page' : undefined}
              onClick={() => {
                setOpen(false);
                go(it.page);
              }}
              data-testid={`nav-${it.page}`}
            >
              {it.label}
            </button>
          </li>
        ))}
      </ul>
      <div className="sidebar-foot">
        <div
          className={`link-dot tone-${verdict ? verdict.tone : LINK_TONE[state]}`}
          data-testid="sidebar-link-state"
          data-state={state}
          data-verdict={verdict?.state}
          title={verdict?.headline}
        >
          <span aria-hidden="true" className="dot" />
          {verdict ? verdict.label : LINK_LABEL[state]}
        </div>
        {snapshot && (
          <div className="muted small sidebar-extra">
            {snapshot.nodeName || 'unnamed node'} · v{snapshot.version}
          </div>
        )}
        <div className="muted small sidebar-extra">{transport === 'ipc' ? 'Desktop app' : 'Browser console'}</div>
      </div>
    </nav>
  );
}
