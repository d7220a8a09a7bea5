// Settings' list of the browser console's open sessions (src/core/console/auth.ts): where and when each
// began, which is this page's, and signing one out or all of them ("sign out everywhere"). Only the
// browser console has sessions; the desktop app shows nothing here.
import type { ConsoleSessionView } from '../../shared/views/settings';
import { getBridge } from '../bridge';
import { Card } from './Card';
import { ErrorText } from './Field';
import { fmtDateTime } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';

function where(s: ConsoleSessionView): string {
  const ua = s.userAgent;
  const browser = /Firefox\/\d+/.exec(ua)?.[0] ?? /Edg\/\d+/.exec(ua)?.[0] ?? /Chrome\/\d+/.exec(ua)?.[0] ?? /Safari\/\d+/.exec(ua)?.[0] ?? ua.slice(0, 40);
  return `${browser.replace('/', ' ')}${s.address ? ` from ${s.address.replace(/^::ffff:/, '')}` : ''}`;
}

export function ConsoleSessions() {
  const list = useFetch(() => getBridge().invoke('console.sessions', {}), []);
  const [signOut, state] = useCall(async (id?: string) => {
    await getBridge().invoke('console.signOut', id ? { id } : {});
    list.reload();
  });
  if (getBridge().transport !== 'websocket') return null;
  return (
    <Card title="Browser sessions" testId="console-sessions">
      <p className="muted small">
        Browsers signed in to this console. Each session ends after a day unused and after a week at most; sign out any you do not recognise.
      </p>
      {list.error && <ErrorText error={list.error} />}
      {list.data && (
        <ul className="plain-list">
          {list.data.map((s) => (
            <li key={s.id} data-testid="console-session" data-current={s.current ? 'true' : 'false'}>
              <span>{where(s)}</span>{' '}
              <span className="muted small">
                signed in {fmtDateTime(s.createdAt)} · last used {fmtDateTime(s.lastUsedAt)}
              </span>{' '}
              {s.current ? (
                <span className="muted small">(this browser)</span>
              ) : (
                <button
                  type="button"
                  className="small-button"
                  onClick={() => void signOut(s.id)}
                  disabled={state.pending}
                  aria-label={`Sign out the session from ${where(s)}`}
                >
                  Sign out
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      <div className="form-actions">
        <button type="button" className="danger" onClick={() => void signOut()} disabled={state.pending} data-testid="sign-out-everywhere">
          Sign out everywhere
        </button>
        <span className="muted small">This browser too: open a new link from the agent to come back.</span>
      </div>
      <ErrorText error={state.error} />
    </Card>
  );
}
