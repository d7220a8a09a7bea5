// The rails' cost in time on the Usage page: how long serving was paused (and ran with fewer requests at
// once) today and in the chosen period, by cause, and the latest decisions with their codes. Data: the
// `usage.rails` bridge call (the ledger's rail_events); words from src/shared/rails-summary.ts, the CLI's too.
import type { RailSpanSummary } from '../../shared/views/usage';
import { railCostLine, railLine, type RailPart } from '../../shared/rails-summary';
import { getBridge } from '../bridge';
import { Card } from './Card';
import { DataTable } from './DataTable';
import { ErrorText } from './Field';
import { fmtAgo, fmtMoney } from '../lib/format';
import { useFetch } from '../lib/use-call';
import { useStore } from '../store/store';

function startOfToday(now: number): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/** One kind of cost's causes, comma-separated, each with its code and time for the specs. */
function Causes({ causes, testId }: { causes: RailPart[]; testId: string }) {
  return causes.map((p, i) => (
    <span key={p.code} data-testid={testId} data-code={p.code} data-ms={p.ms}>
      {i > 0 && ', '}
      {p.text}
    </span>
  ));
}

function Line({ summary, when, testId }: { summary: RailSpanSummary; when: string; testId: string }) {
  const l = railLine(summary, when);
  const cost = railCostLine(summary, fmtMoney);
  return (
    <>
      <p data-testid={testId} data-code={l.code} data-paused-ms={summary.pausedMs} data-throttled-ms={summary.throttledMs}>
        {l.head}
        {l.paused.length > 0 && ': '}
        <Causes causes={l.paused} testId="rails-paused-cause" />.{l.throttled.length > 0 && ' Fewer requests at once: '}
        <Causes causes={l.throttled} testId="rails-throttled-cause" />
        {l.throttled.length > 0 && '.'}
      </p>
      {cost && (
        <p
          className="muted small"
          data-testid={`${testId}-cost`}
          data-code={cost.code}
          data-requests={summary.cost?.requests}
          data-declined={summary.cost?.declined}
        >
          {cost.text}
        </p>
      )}
    </>
  );
}

export function RailsCard({ from, to, label, refreshKey }: { from: number; to: number; label: string; refreshKey: number }) {
  // A pause or resume (the snapshot's pause state) reads the ledger again.
  const pause = useStore((s) => `${s.snapshot?.pause.paused ?? false}:${s.snapshot?.pause.cause ?? ''}`);
  const today = useFetch(() => {
    const now = Date.now();
    return getBridge().invoke('usage.rails', { from: startOfToday(now), to: now });
  }, [refreshKey, pause]);
  const period = useFetch(() => getBridge().invoke('usage.rails', { from, to: Math.max(to, Date.now()) }), [from, to, refreshKey, pause]);
  // The agent's own start (rails_start) only closes spans: the list shows the rails' decisions.
  const recent = (today.data?.recent ?? []).filter((e) => e.code !== 'rails_start');
  return (
    <Card title="Paused and throttled" testId="usage-rails">
      <ErrorText error={today.error ?? period.error} />
      {today.data && <Line summary={today.data.summary} when="today" testId="rails-today" />}
      {period.data && <Line summary={period.data.summary} when={label.toLowerCase().replace(/^last/, 'in the last')} testId="rails-period" />}
      {recent.length > 0 && (
        <DataTable testId="rails-recent" dense columns={[{ label: 'When' }, { label: 'Decision' }, { label: 'What was seen' }]}>
          {recent.slice(0, 10).map((e) => (
            <tr key={e.id} data-code={e.code}>
              <td>{fmtAgo(e.at)}</td>
              <td>
                <code>{e.code}</code>
              </td>
              <td>{e.detail}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </Card>
  );
}
