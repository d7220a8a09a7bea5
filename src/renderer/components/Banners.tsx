// Page-wide messages: the link to the agent itself, and short notices after actions.
import { dismissNotice } from '../store/actions';
import { useStore } from '../store/store';

export function ConnectionBanner() {
  const connection = useStore((s) => s.connection);
  const loadError = useStore((s) => s.loadError);
  if (connection === 'reconnecting') {
    return (
      <div className="banner banner-warn" role="status" data-testid="reconnect-banner">
        Reconnecting to the agent… Live data resumes when it is back; nothing is lost on the agent's side.
      </div>
    );
  }
  if (connection === 'unauthorized') {
    return (
      <div className="banner banner-bad" role="alert" data-testid="unauthorized-banner">
        The agent no longer knows this page's session (sessions end when the agent stops, after a day unused, or when signed out). Open a new link from{' '}
        <code>swan-provider run</code> (each link works once; press Enter in its terminal for another), or your bookmark ending in <code>?token=…</code> if the
        agent uses a token file.
      </div>
    );
  }
  if (loadError) {
    return (
      <div className="banner banner-bad" role="alert" data-testid="load-error-banner">
        {loadError}
      </div>
    );
  }
  return null;
}

export function Notices() {
  const notices = useStore((s) => s.notices);
  return (
    <div className="notices" aria-live="polite" data-testid="notices">
      {notices.map((n) => (
        <div key={n.id} className={`notice notice-${n.kind}`} role={n.kind === 'error' ? 'alert' : 'status'}>
          <span>{n.text}</span>
          <button type="button" className="icon-button" aria-label="Dismiss" onClick={() => dismissNotice(n.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
