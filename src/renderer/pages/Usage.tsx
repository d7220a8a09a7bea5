// Usage and earnings from the ledger: per hour or day, per model, totals, CSV export.
import { useMemo, useState } from 'react';
import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { EarningsOverview, UsageReport } from '../../shared/views/usage';
import { getBridge } from '../bridge';
import { Card, Stat } from '../components/Card';
import { DataTable, ModelCell } from '../components/DataTable';
import { PricesCard } from '../components/PricesCard';
import { KeepCard, PlatformRecordCard, RatesCard } from '../components/EarningsCards';
import { ChartLegend } from '../components/ChartLegend';
import { DemandCard } from '../components/DemandCard';
import { useStore } from '../store/store';
import { ErrorText } from '../components/Field';
import { fmtClock, fmtDate, fmtDay, fmtInt, fmtMoney, fmtMonth, fmtMs, fmtNumber, fmtPercent } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { valueAxis } from '../lib/axis';
import { Segmented } from '../components/Segmented';
import { FleetUsageCard } from '../components/FleetUsageCard';
import { BusyButton } from '../components/BusyButton';
import { NetworkRecordsCard } from '../components/NetworkRecordsCard';
import { RailsCard } from '../components/RailsCard';

const RANGES = {
  '24h': { label: 'Last 24 hours', ms: 24 * 3600_000, bucket: 'hour' as const },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000, bucket: 'day' as const },
  '30d': { label: 'Last 30 days', ms: 30 * 86_400_000, bucket: 'day' as const },
  '12mo': { label: 'Last 12 months', ms: 365 * 86_400_000, bucket: 'month' as const },
};
type RangeKey = keyof typeof RANGES;

function bucketLabel(ts: number, bucket: 'hour' | 'day' | 'month'): string {
  return bucket === 'month' ? fmtMonth(ts) : bucket === 'hour' ? fmtClock(ts) : fmtDay(ts);
}

function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function UsageCharts({ report, bucket }: { report: UsageReport; bucket: 'hour' | 'day' | 'month' }) {
  const data = useMemo(() => report.buckets.map((b) => ({ ...b, cost: b.cost ?? 0, label: bucketLabel(b.start, bucket) })), [report, bucket]);
  // An all-zero series would draw an empty $0–$4 axis: say what is missing instead.
  const anyMoney = data.some((b) => b.earnings > 0 || b.cost > 0);
  const anyTokens = data.some((b) => b.tokensIn > 0 || b.tokensOut > 0);
  const money = valueAxis('money', Math.max(0, ...data.map((b) => Math.max(b.earnings, b.cost))));
  const tokens = valueAxis('count', Math.max(0, ...data.map((b) => b.tokensIn + b.tokensOut)));
  return (
    <div className="grid-2">
      <Card title={`Earnings and power cost per ${bucket} (USD)`}>
        <div className="chart-body series-earn" data-testid="usage-earnings-chart" data-points={data.length} data-empty={!anyMoney}>
          {anyMoney ? (
            <>
              <ResponsiveContainer width="100%" height={220}>
                <BarChart data={data} margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
                  <CartesianGrid className="chart-grid" vertical={false} />
                  <XAxis dataKey="label" className="chart-axis" minTickGap={12} />
                  <YAxis width={money.width} className="chart-axis" domain={money.domain} ticks={money.ticks} interval={0} tickFormatter={money.format} />
                  <Tooltip isAnimationActive={false} formatter={(v, name) => [fmtMoney(Number(v)), name === 'cost' ? 'Power cost' : 'Earnings']} />
                  <Bar dataKey="earnings" className="chart-bar" isAnimationActive={false} />
                  <Bar dataKey="cost" className="chart-bar-cost" isAnimationActive={false} />
                </BarChart>
              </ResponsiveContainer>
              <ChartLegend
                items={[
                  { label: 'Earnings', swatch: 'earn' },
                  { label: 'Power cost', swatch: 'cost' },
                ]}
              />
            </>
          ) : (
            <p className="empty chart-empty" data-testid="usage-earnings-empty">
              {report.totals.requests === 0
                ? 'No requests in this period.'
                : 'No earnings in this period: the requests served were not priced or not paid (see Where the rates come from).'}
            </p>
          )}
        </div>
      </Card>
      <Card title={`Tokens per ${bucket}`}>
        <div className="chart-body series-tokens" data-testid="usage-tokens-chart" data-empty={!anyTokens}>
          {!anyTokens && <p className="empty chart-empty">No tokens in this period.</p>}
          {anyTokens && (
            <>
              <ResponsiveContainer width="100%" height={220}>
                <BarChart data={data} margin={{ top: 8, right: 12, bottom: 4, left: 0 }}>
                  <CartesianGrid className="chart-grid" vertical={false} />
                  <XAxis dataKey="label" className="chart-axis" minTickGap={12} />
                  <YAxis width={tokens.width} className="chart-axis" domain={tokens.domain} ticks={tokens.ticks} interval={0} tickFormatter={tokens.format} />
                  <Tooltip isAnimationActive={false} formatter={(v, name) => [`${fmtInt(Number(v))} tokens`, name === 'tokensIn' ? 'In' : 'Out']} />
                  <Bar dataKey="tokensIn" stackId="t" className="chart-bar-in" isAnimationActive={false} />
                  <Bar dataKey="tokensOut" stackId="t" className="chart-bar-out" isAnimationActive={false} />
                </BarChart>
              </ResponsiveContainer>
              <ChartLegend
                items={[
                  { label: 'Tokens in', swatch: 'in' },
                  { label: 'Tokens out', swatch: 'out' },
                ]}
              />
            </>
          )}
        </div>
      </Card>
    </div>
  );
}

export function Usage() {
  const [range, setRange] = useState<RangeKey>('24h');
  const r = RANGES[range];
  // `to` is fixed per range choice so a refresh shows a stable window.
  const [to, setTo] = useState(() => Date.now());
  const from = Math.max(0, to - r.ms);
  const report = useFetch(() => getBridge().invoke('usage.report', { from, to, bucket: r.bucket }), [from, to, r.bucket]);
  const [exportCsv, exportState] = useCall(async () => {
    const csv = await getBridge().invoke('usage.exportCsv', { from, to });
    download(`swan-usage-${fmtDate(from)}-${fmtDate(to)}.csv`, csv, 'text/csv');
  });
  const rep = report.data;
  const overview = useFetch(() => getBridge().invoke('earnings.overview', {}), [to]);
  const [overviewSet, setOverview] = useState<EarningsOverview | undefined>(undefined);
  const ov = overviewSet && overview.data && overviewSet.generatedAt > overview.data.generatedAt ? overviewSet : (overview.data ?? overviewSet);
  // A joined string keeps the selector's result stable between snapshots with the same models.
  const models = useStore((s) => s.snapshot?.models.map((m) => m.id).join('\n') ?? '')
    .split('\n')
    .filter(Boolean);
  return (
    <div className="page" data-testid="page-usage">
      <h1>Usage &amp; earnings</h1>
      <div className="toolbar">
        <Segmented
          label="Period"
          options={(Object.keys(RANGES) as RangeKey[]).map((k) => ({ value: k, label: RANGES[k].label }))}
          value={range}
          onChange={(k) => {
            setRange(k);
            setTo(Date.now());
          }}
          testIdPrefix="range-"
        />
        <button type="button" onClick={() => setTo(Date.now())} data-testid="usage-refresh">
          Refresh
        </button>
        <BusyButton onClick={() => void exportCsv()} data-testid="usage-export" busy={exportState.pending} busyLabel="Exporting…">
          Export CSV
        </BusyButton>
      </div>
      <ErrorText error={report.error ?? exportState.error} />
      <FleetUsageCard refreshKey={to} />
      {/* The platform keeps 24 h, 7 d and 30 d; the 12-month view shows its 30 days. */}
      <NetworkRecordsCard span={range === '12mo' ? '30d' : range} refreshKey={to} />
      {rep && (
        <>
          <Card title="Totals" testId="usage-totals">
            <div className="stats">
              <Stat label="Requests" value={fmtInt(rep.totals.requests)} testId="usage-requests" />
              <Stat label="Tokens in" value={fmtInt(rep.totals.tokensIn)} />
              <Stat label="Tokens out" value={fmtInt(rep.totals.tokensOut)} testId="usage-tokens-out" />
              <Stat label="Earnings" value={fmtMoney(rep.totals.earnings)} testId="usage-earnings" />
              <Stat label="Power cost" value={fmtMoney(rep.totals.cost ?? 0)} testId="usage-cost" />
              <Stat label="Net" value={fmtMoney(rep.totals.earnings - (rep.totals.cost ?? 0))} testId="usage-net" />
              <Stat label="Error rate" value={fmtPercent(rep.errorRate)} />
            </div>
          </Card>
          <UsageCharts report={rep} bucket={r.bucket} />
          <Card title="Per model">
            {rep.perModel.length === 0 ? (
              <p className="empty">No requests in this period.</p>
            ) : (
              <DataTable
                testId="usage-per-model"
                dense
                columns={[
                  { label: 'Model' },
                  ...['Requests', 'Tokens in', 'Tokens out', 'p50 latency', 'p95 latency', 'p50 tok/s', 'Errors', 'Earnings', 'Power cost', 'Net'].map(
                    (label) => ({ label, num: true }),
                  ),
                ]}
              >
                {rep.perModel.map((m) => (
                  <tr key={m.model}>
                    <ModelCell model={m.model} />
                    <td className="num">{fmtInt(m.requests)}</td>
                    <td className="num">{fmtInt(m.tokensIn)}</td>
                    <td className="num">{fmtInt(m.tokensOut)}</td>
                    <td className="num">{fmtMs(m.p50LatencyMs)}</td>
                    <td className="num">{fmtMs(m.p95LatencyMs)}</td>
                    <td className="num">{fmtNumber(m.p50TokensPerSecond, 1)}</td>
                    <td className="num">{fmtInt(m.errors)}</td>
                    <td className="num">{fmtMoney(m.earnings)}</td>
                    <td className="num">{fmtMoney(m.cost ?? 0)}</td>
                    <td className="num">{fmtMoney(m.earnings - (m.cost ?? 0))}</td>
                  </tr>
                ))}
              </DataTable>
            )}
          </Card>
        </>
      )}
      {report.loading && !rep && <p className="muted">Loading usage…</p>}
      <RailsCard from={from} to={to} label={r.label} refreshKey={to} />
      <ErrorText error={overview.error} />
      {ov && (
        <>
          <KeepCard o={ov} onChange={setOverview} />
          <PlatformRecordCard o={ov} />
          <RatesCard o={ov} />
        </>
      )}
      <DemandCard />
      <PricesCard models={models} />
    </div>
  );
}
