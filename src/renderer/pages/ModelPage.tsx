// One model: its state, its requests, latency, errors and earnings over time, and its newest requests.
import { useMemo, useState, useSyncExternalStore } from 'react';
import type { ModelReport } from '../../shared/bridge';
import { getBridge } from '../bridge';
import { HealthBadge, StatusBadge } from '../components/Badge';
import { Card, Stat } from '../components/Card';
import { fmtClock, fmtDateTime, fmtDay, fmtInt, fmtMoney, fmtMs, fmtNumber, fmtPercent, fmtTime } from '../lib/format';
import { go, routeModel } from '../lib/route';
import { useFetch } from '../lib/use-call';
import { selectRequest } from '../store/actions';
import { useStore } from '../store/store';
import { Segmented } from '../components/Segmented';
import { TimeChart } from '../components/TimeChart';

const SPANS = [
  { hours: 24, label: '24 h' },
  { hours: 168, label: '7 days' },
] as const;

type Row = ModelReport['buckets'][number];

function Chart({ data, keys, unit, title, testId, hours }: { data: Row[]; keys: { key: keyof Row & string; name: string; dashed?: boolean }[]; unit: string; title: string; testId: string; hours: number }) {
  return (
    <TimeChart
      title={title}
      testId={testId}
      data={data}
      xKey="start"
      lines={keys}
      xTick={(v) => (hours > 24 ? fmtDay(v) : fmtClock(v))}
      tickCount={6}
      tooltipLabel={fmtDateTime}
      yWidth={60}
      yTick={(v) => `${fmtNumber(v, unit === '$' ? 2 : 0)}${unit === '$' ? '' : ` ${unit}`}`}
      tooltipValue={(v) => (unit === '$' ? fmtMoney(v) : `${fmtNumber(v, 0)} ${unit}`)}
    />
  );
}

function subscribeHash(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

export function ModelPage() {
  const model = useSyncExternalStore(subscribeHash, routeModel);
  const [hours, setHours] = useState<number>(24);
  const state = useStore((s) => s.snapshot?.models.find((m) => m.id === model));
  const todayRequests = useStore((s) => s.snapshot?.today.requests ?? 0);
  const report = useFetch(() => getBridge().invoke('usage.model', { model, hours }), [model, hours, todayRequests]);
  const all = useStore((s) => s.requests);
  const recent = useMemo(() => all.filter((r) => r.model === model).slice(0, 15), [all, model]);
  const t = report.data?.totals;
  const data = report.data?.buckets ?? [];
  return (
    <div className="page" data-testid="page-model">
      <h1>
        <span className="mono">{model || 'No model chosen'}</span>
      </h1>
      <p>
        <button type="button" className="small-button" onClick={() => go('dashboard')}>
          Back to the Dashboard
        </button>{' '}
        {state ? (
          <>
            <HealthBadge health={state.health} /> <span className="muted small">{state.enabled ? 'served' : 'switched off'} · {state.endpoints.map((e) => e.url).join(', ')}</span>
          </>
        ) : (
          <span className="muted small">Not offered by any engine right now; its history is below.</span>
        )}
      </p>
      <Card
        title="Over time"
        testId="model-over-time"
        actions={
          <Segmented label="Span" options={SPANS.map((s) => ({ value: s.hours as number, label: s.label }))} value={hours} onChange={setHours} testIdPrefix="model-span-" />
        }
      >
        {report.error && <p className="error-text">{report.error}</p>}
        <div className="stats">
          <Stat label="Requests" value={fmtInt(t?.requests ?? 0)} testId="model-requests" />
          <Stat label="Errors" value={fmtInt(t?.errors ?? 0)} testId="model-errors" />
          <Stat label="Error rate" value={t && t.requests ? fmtPercent(t.errors / t.requests) : '—'} />
          <Stat label="Latency p50 / p95" value={`${fmtMs(t?.p50LatencyMs)} / ${fmtMs(t?.p95LatencyMs)}`} />
          <Stat label="Speed p50" value={t?.p50TokensPerSecond != null ? `${fmtNumber(t.p50TokensPerSecond, 1)} tok/s` : '—'} />
          <Stat label="Earnings" value={fmtMoney(t?.earnings ?? 0)} testId="model-earnings" />
        </div>
        <div className="chart-grid-2 model-charts">
          <Chart data={data} keys={[{ key: 'requests', name: 'requests' }, { key: 'errors', name: 'errors', dashed: true }]} unit="" title="Requests and errors" testId="model-chart-requests" hours={hours} />
          <Chart data={data} keys={[{ key: 'p50LatencyMs', name: 'p50' }, { key: 'p95LatencyMs', name: 'p95', dashed: true }]} unit="ms" title="Latency" testId="model-chart-latency" hours={hours} />
          <Chart data={data} keys={[{ key: 'earnings', name: 'earnings' }]} unit="$" title="Earnings" testId="model-chart-earnings" hours={hours} />
        </div>
      </Card>
      <Card title="Newest requests" testId="model-recent">
        {recent.length === 0 ? (
          <p className="empty">No requests for this model since the agent started.</p>
        ) : (
          <ul className="plain-list small">
            {recent.map((r) => (
              <li key={r.id} data-testid="model-recent-request">
                <button
                  type="button"
                  className="small-button"
                  onClick={() => {
                    selectRequest(r.id);
                    go('requests');
                  }}
                >
                  {fmtTime(r.startedAt)}
                </button>{' '}
                <StatusBadge status={r.status} /> {r.source === 'hub' ? 'network' : 'local'} · {fmtInt(r.tokensOut)} tokens out · {fmtMs(r.latencyMs)}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
