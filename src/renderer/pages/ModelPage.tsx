// One model: its state, its requests, latency, errors and earnings over time, and its newest requests.
import { useCallback, useMemo, useState, useSyncExternalStore } from 'react';
import type { ModelReport } from '../../shared/views/usage';
import { getBridge } from '../bridge';
import { HealthBadge, StatusBadge } from '../components/Badge';
import { Card, Stat } from '../components/Card';
import { fmtClock, fmtDateTime, fmtDay, fmtInt, fmtMoney, fmtMs, fmtNumber, fmtPercent, fmtTime } from '../lib/format';
import { go, routeModel } from '../lib/route';
import { useFetch } from '../lib/use-call';
import { useStore } from '../store/store';
import { Segmented } from '../components/Segmented';
import { RequestDetail } from '../components/RequestDetail';
import { TimeChart } from '../components/TimeChart';

const SPANS = [
  { hours: 24, label: '24 h' },
  { hours: 168, label: '7 days' },
] as const;

type Row = ModelReport['buckets'][number];

function Chart({
  data,
  keys,
  axis,
  title,
  testId,
  hours,
  empty,
}: {
  data: Row[];
  keys: { key: keyof Row & string; name: string; dashed?: boolean }[];
  axis: 'count' | 'duration' | 'money';
  title: string;
  testId: string;
  hours: number;
  empty: string;
}) {
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
      axis={axis}
      tooltipValue={(v) => (axis === 'money' ? fmtMoney(v) : axis === 'duration' ? fmtMs(v) : fmtInt(v))}
      empty={empty}
    />
  );
}

/** Requests shown at first, and added per "Show more". */
const PAGE = 20;

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
  const [shown, setShown] = useState(PAGE);
  const [openId, setOpenId] = useState<string | null>(null);
  // Newest first (the store keeps them oldest first).
  const mine = useMemo(() => all.filter((r) => r.model === model).reverse(), [all, model]);
  const recent = mine.slice(0, shown);
  const open = openId ? mine.find((r) => r.id === openId) : undefined;
  const close = useCallback(() => setOpenId(null), []);
  const t = report.data?.totals;
  const data = report.data?.buckets ?? [];
  // A bucket with requests but no latency (all refused) draws no point rather than a zero.
  const withLatency = data.map((b) => (b.requests > 0 ? b : { ...b, p50LatencyMs: null, p95LatencyMs: null }));
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
            <HealthBadge health={state.health} />{' '}
            <span className="muted small">
              {state.enabled ? 'served' : 'switched off'} · {state.endpoints.map((e) => e.url).join(', ')}
            </span>
          </>
        ) : (
          <span className="muted small">Not offered by any engine right now; its history is below.</span>
        )}
      </p>
      <Card
        title="Over time"
        testId="model-over-time"
        actions={
          <Segmented
            label="Span"
            options={SPANS.map((s) => ({ value: s.hours as number, label: s.label }))}
            value={hours}
            onChange={setHours}
            testIdPrefix="model-span-"
          />
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
          <Chart
            data={data}
            keys={[
              { key: 'requests', name: 'requests' },
              { key: 'errors', name: 'errors', dashed: true },
            ]}
            axis="count"
            title="Requests and errors"
            testId="model-chart-requests"
            hours={hours}
            empty="No requests in this span."
          />
          <Chart
            data={withLatency}
            keys={[
              { key: 'p50LatencyMs', name: 'median (p50)' },
              ...(data.some((b) => b.requests >= 2) ? [{ key: 'p95LatencyMs' as const, name: 'p95', dashed: true }] : []),
            ]}
            axis="duration"
            title="Latency (start to last token)"
            testId="model-chart-latency"
            hours={hours}
            empty="No finished requests in this span."
          />
          <Chart
            data={data}
            keys={[{ key: 'earnings', name: 'earnings' }]}
            axis="money"
            title="Earnings (USD)"
            testId="model-chart-earnings"
            hours={hours}
            empty="No requests in this span."
          />
        </div>
      </Card>
      <Card title="Newest requests" testId="model-recent">
        {mine.length === 0 ? (
          <p className="empty">No requests for this model since the agent started.</p>
        ) : (
          <>
            <ul className="plain-list recent-list">
              {recent.map((r) => (
                <li key={r.id}>
                  <button
                    type="button"
                    className="recent-row"
                    onClick={() => setOpenId(r.id)}
                    aria-expanded={openId === r.id}
                    data-testid="model-recent-request"
                    data-id={r.id}
                  >
                    <span className="recent-time">{fmtTime(r.startedAt)}</span>
                    <StatusBadge status={r.status} />
                    <span className="muted small">
                      {r.source === 'hub' ? 'network' : 'local'} · {fmtInt(r.tokensOut)} tokens out · {fmtMs(r.latencyMs)}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
            <p className="form-actions">
              <span className="muted small" data-testid="model-recent-count">
                {fmtInt(recent.length)} of {fmtInt(mine.length)}, newest first
              </span>
              {mine.length > shown && (
                <button type="button" className="small-button" onClick={() => setShown(shown + PAGE)} data-testid="model-recent-more">
                  Show {Math.min(PAGE, mine.length - shown)} more
                </button>
              )}
            </p>
          </>
        )}
      </Card>
      {open && (
        <div className="detail-drawer">
          <RequestDetail request={open} onClose={close} />
        </div>
      )}
    </div>
  );
}
