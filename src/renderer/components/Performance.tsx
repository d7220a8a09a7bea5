// Dashboard → Performance: TTFT and tokens/s over the last 30 minutes (p50 and p95 per minute), and
// today's share of requests and earnings by model.
import { useMemo } from 'react';
import { getBridge } from '../bridge';
import { fmtClock, fmtMoney, fmtNumber, fmtPercent } from '../lib/format';
import { modelShare, perfSeries, type PerfPoint } from '../lib/perf';
import { modelHref } from '../lib/route';
import { useFetch } from '../lib/use-call';
import { useStore } from '../store/store';
import { Card } from './Card';
import { DataTable } from './DataTable';
import { TimeChart } from './TimeChart';

function PercentileChart({ data, p50, p95, unit, title, testId }: { data: PerfPoint[]; p50: keyof PerfPoint; p95: keyof PerfPoint; unit: string; title: string; testId: string }) {
  return (
    <TimeChart
      title={title}
      testId={testId}
      data={data}
      xKey="ts"
      lines={[
        { key: p50, name: 'p50' },
        { key: p95, name: 'p95', dashed: true },
      ]}
      points={data.filter((d) => d[p50] !== null).length}
      xTick={fmtClock}
      tooltipLabel={fmtClock}
      yTick={(v) => `${fmtNumber(v, 0)} ${unit}`}
      tooltipValue={(v) => `${fmtNumber(v, 1)} ${unit}`}
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
  return (
    <div className="grid-2 grid-collapse" data-testid="performance">
      <Card title="Speed, last 30 minutes">
        <div className="chart-grid-2">
          <PercentileChart data={data} p50="ttftP50" p95="ttftP95" unit="ms" title="Time to first token" testId="chart-ttft" />
          <PercentileChart data={data} p50="tpsP50" p95="tpsP95" unit="tok/s" title="Tokens per second" testId="chart-tps" />
        </div>
        <p className="muted small">Per minute: median (p50) solid, p95 dashed.</p>
      </Card>
      <Card title="Share by model, today">
        <ModelShare />
      </Card>
    </div>
  );
}
