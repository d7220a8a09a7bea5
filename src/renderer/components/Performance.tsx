// Dashboard → Performance: the queue wait, the engine's time to first token and tokens/s over the last
// 30 minutes (p50, and p95 where a minute had more than one request), and today's share by model.
import { useMemo } from 'react';
import { getBridge } from '../bridge';
import { fmtClock, fmtMoney, fmtMs, fmtNumber, fmtPercent } from '../lib/format';
import { hasSpread, modelShare, perfEmpty, perfSeries, type PerfEmpty, type PerfPoint } from '../lib/perf';
import { modelHref } from '../lib/route';
import { useFetch } from '../lib/use-call';
import { useStore } from '../store/store';
import { Card } from './Card';
import { DataTable } from './DataTable';
import { TimeChart } from './TimeChart';

/**
 * What an empty chart says: that nothing finished, or, when requests did finish, what they lack for this
 * figure (so "No finished requests" never sits beside charts of finished ones).
 */
function emptyText(empty: PerfEmpty, lacking: string): string {
  if (empty.code === 'no_finished_requests') return 'No finished requests in the last 30 minutes.';
  return `${empty.finished} ${empty.finished === 1 ? 'request' : 'requests'} finished in the last 30 minutes, ${lacking}.`;
}

function PercentileChart({
  data,
  p50,
  p95,
  spread,
  axis,
  unit,
  title,
  testId,
  lacking,
}: {
  data: PerfPoint[];
  p50: keyof PerfPoint & string;
  p95: keyof PerfPoint & string;
  spread: boolean;
  axis: 'duration' | 'rate';
  unit: string;
  title: string;
  testId: string;
  lacking: string;
}) {
  const empty = perfEmpty(data);
  return (
    <TimeChart
      title={title}
      testId={testId}
      data={data}
      xKey="ts"
      // p95 only where it can differ from p50: a minute with one request has one value.
      lines={[{ key: p50, name: 'median (p50)' }, ...(spread ? [{ key: p95, name: 'p95', dashed: true }] : [])]}
      xTick={fmtClock}
      tooltipLabel={fmtClock}
      axis={axis}
      tooltipValue={(v) => (axis === 'duration' ? fmtMs(v) : `${fmtNumber(v, 1)} ${unit}`)}
      empty={emptyText(empty, lacking)}
      emptyCode={empty.code}
    />
  );
}

function ModelShare() {
  const todayRequests = useStore((s) => s.snapshot?.today.requests ?? 0);
  const report = useFetch(() => {
    const from = new Date();
    from.setHours(0, 0, 0, 0);
    return getBridge().invoke('usage.report', { from: from.getTime(), to: Date.now(), bucket: 'hour' });
  }, [todayRequests]);
  const rows = useMemo(() => modelShare(report.data?.perModel ?? []), [report.data]);
  if (rows.length === 0) return <p className="empty">No requests today yet.</p>;
  return (
    <DataTable testId="model-share" className="share-table" columns={[{ label: 'Model' }, { label: 'Requests' }, { label: 'Earnings' }]}>
      {rows.map((r) => (
        <tr key={r.model} data-testid="model-share-row">
          <th scope="row" className="mono">
            <a href={modelHref(r.model)} data-testid="model-link">
              {r.model}
            </a>
          </th>
          <td>
            <span className="share-bar" style={{ width: `${Math.round(r.requestShare * 100)}%` }} aria-hidden="true" />
            {fmtPercent(r.requestShare, 0)} <span className="muted small">({fmtNumber(r.requests)})</span>
          </td>
          <td>
            <span className="share-bar share-earn" style={{ width: `${Math.round(r.earningShare * 100)}%` }} aria-hidden="true" />
            {fmtPercent(r.earningShare, 0)} <span className="muted small">({fmtMoney(r.earnings)})</span>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export function Performance() {
  const requests = useStore((s) => s.requests);
  const now = Math.floor(Date.now() / 60_000) * 60_000 + 60_000;
  const data = useMemo(() => perfSeries(requests, now), [requests, now]);
  const spread = hasSpread(data);
  return (
    <div data-testid="performance">
      <Card title="Speed, last 30 minutes" testId="speed-card">
        <div className="chart-grid-3">
          <PercentileChart
            data={data}
            p50="queueP50"
            p95="queueP95"
            spread={spread}
            axis="duration"
            unit="ms"
            title="Wait in the queue"
            testId="chart-queue"
            lacking="none with a measured wait"
          />
          <PercentileChart
            data={data}
            p50="ttftP50"
            p95="ttftP95"
            spread={spread}
            axis="duration"
            unit="ms"
            title="Time to first token (engine)"
            testId="chart-ttft"
            lacking="none streamed: time to first token is measured on streamed answers only"
          />
          <PercentileChart
            data={data}
            p50="tpsP50"
            p95="tpsP95"
            spread={spread}
            axis="rate"
            unit="tok/s"
            title="Tokens per second"
            testId="chart-tps"
            lacking="none with an output token count over a measurable time, so no speed can be given"
          />
        </div>
        <p className="muted small">
          One point a minute, from the requests that finished in it. The wait for a free slot is shown apart: time to first token counts from when the engine
          got the request.
          {spread ? '' : ' No minute had two requests yet, so there is no p95 line.'}
        </p>
      </Card>
      <Card title="Share by model, today">
        <ModelShare />
      </Card>
    </div>
  );
}
