// What the hub told this provider (reputation, withheld traffic, rejected declarations, payouts):
// severity, model and time of each notice, newest first. The agent keeps them, so a reload shows them again.
import type { HubNoticeView, NoticeSeverity } from '../../shared/views/snapshot';
import { fmtDateTime } from '../lib/format';
import { isoTime } from '../../shared/dates';
import { useStore } from '../store/store';
import { Badge } from './Badge';
import { Card } from './Card';

const TONE: Record<NoticeSeverity, 'info' | 'warn' | 'bad'> = { info: 'info', warning: 'warn', critical: 'bad' };

/** "traffic_withheld" → "Traffic withheld". */
function title(event: string): string {
  const t = event.replace(/^hub_/, '').replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}

function NoticeItem({ n }: { n: HubNoticeView }) {
  const details = Object.entries(n.details ?? {});
  return (
    <li className="hub-notice" data-testid="hub-notice" data-severity={n.severity} data-event={n.event}>
      <div className="hub-notice-head">
        <Badge tone={TONE[n.severity]} testId="hub-notice-severity">
          {n.severity}
        </Badge>
        <strong>{title(n.event)}</strong>
        {n.modelId && (
          <span className="mono small" data-testid="hub-notice-model">
            {n.modelId}
          </span>
        )}
        <time className="muted small" dateTime={isoTime(n.receivedAt)} data-testid="hub-notice-time">
          {fmtDateTime(n.receivedAt)}
        </time>
      </div>
      {/* Plain text only: the hub's words are never read as markup. */}
      <p className="hub-notice-message" data-testid="hub-notice-message">
        {n.message}
      </p>
      {details.length > 0 && (
        <dl className="hub-notice-details small">
          {details.map(([k, v]) => (
            <div key={k}>
              <dt className="muted">{k.replace(/_/g, ' ')}</dt>
              <dd className="mono">{v}</dd>
            </div>
          ))}
        </dl>
      )}
    </li>
  );
}

export function HubNotices() {
  const notices = useStore((s) => s.hubNotices);
  return (
    <Card title="Notices from Swan Inference" testId="hub-notices">
      {notices.length === 0 ? (
        <p className="empty" data-testid="hub-notices-empty">
          No notices. The network tells you here when something about this provider needs your attention (reputation, withheld traffic, payouts).
        </p>
      ) : (
        <ul className="plain-list hub-notice-list">
          {notices.slice(0, 10).map((n) => (
            <NoticeItem key={n.id} n={n} />
          ))}
        </ul>
      )}
    </Card>
  );
}
