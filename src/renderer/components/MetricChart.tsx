// One live line chart: a numeric time axis over the chosen window, units on the value axis, no dots and
// no animation (live data). `data-points` exposes how many points are drawn (tests wait on it).
import { memo } from 'react';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { valueAxis } from '../lib/axis';
import { fmtClock, fmtNumber, fmtTime } from '../lib/format';

export interface ChartPoint {
  ts: number;
  [key: string]: number | null;
}

export interface MetricChartProps {
  testId: string;
  title: string;
  unit: string;
  data: ChartPoint[];
  dataKey: string;
  /** A second line (e.g. VRAM total) drawn dashed. */
  limitKey?: string;
  limitLabel?: string;
  now: number;
  windowMinutes: number;
  /** The axis's fixed top (100 %, the VRAM total); else a round value above the data. */
  top?: number;
  digits?: number;
  series: 'util' | 'vram' | 'temp' | 'power' | 'cpu' | 'ram';
  current: number | null;
}

type PlotProps = Omit<MetricChartProps, 'testId' | 'series' | 'current'>;

/**
 * The plot alone, memoised: the caption's live value changes every second, but the plot redraws only
 * when its data or time axis change (callers hand it new data at most once per drawn point's span).
 */
function samePlot(a: PlotProps, b: PlotProps): boolean {
  for (const k of Object.keys(a) as Array<keyof PlotProps>) {
    if (a[k] !== b[k]) return false;
  }
  return Object.keys(a).length === Object.keys(b).length;
}

const Plot = memo(function Plot(p: PlotProps) {
  // The axis spans the chosen window once there is that much data; until then, the data there is.
  const first = p.data[0]?.ts;
  const from = Math.max(p.now - p.windowMinutes * 60_000, first !== undefined && first < p.now - 10_000 ? first : p.now - 10_000);
  const tickFmt = p.windowMinutes <= 5 ? fmtTime : fmtClock;
  let max = 0;
  for (const d of p.data) max = Math.max(max, Number(d[p.dataKey] ?? 0) || 0, p.limitKey ? Number(d[p.limitKey] ?? 0) || 0 : 0);
  const y = valueAxis(p.unit === '%' ? 'percent' : 'unit', max, { unit: p.unit, ...(p.top !== undefined ? { top: p.top } : {}) });
  return (
    <div className="chart-body">
      <ResponsiveContainer width="100%" height={150}>
        <LineChart data={p.data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
          <CartesianGrid className="chart-grid" vertical={false} />
          <XAxis
            dataKey="ts"
            type="number"
            scale="time"
            domain={[from, p.now]}
            allowDataOverflow
            tickFormatter={(v: number) => tickFmt(v)}
            tickCount={5}
            minTickGap={28}
            className="chart-axis"
          />
          <YAxis width={y.width} domain={y.domain} ticks={y.ticks} interval={0} tickFormatter={y.format} className="chart-axis" />
          <Tooltip
            isAnimationActive={false}
            labelFormatter={(v) => fmtTime(Number(v))}
            formatter={(v) => [`${fmtNumber(Number(v), p.digits ?? 1)} ${p.unit}`, p.title]}
          />
          {p.limitKey && (
            <Line
              type="stepAfter"
              dataKey={p.limitKey}
              name={p.limitLabel}
              className="chart-limit"
              dot={false}
              isAnimationActive={false}
              strokeDasharray="4 4"
              strokeWidth={1}
              connectNulls
            />
          )}
          <Line
            type="monotone"
            dataKey={p.dataKey}
            name={p.title}
            className="chart-line"
            dot={false}
            isAnimationActive={false}
            strokeWidth={2}
            connectNulls={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}, samePlot);

function MetricChartView({ testId, series, current, ...plot }: MetricChartProps) {
  const latest = current === null ? '—' : `${fmtNumber(current, plot.digits ?? 0)} ${plot.unit}`;
  return (
    <figure className={`chart series-${series}`} data-testid={testId} data-points={plot.data.length}>
      <figcaption>
        <span className="chart-title">{plot.title}</span>
        <span className="chart-value" data-testid={`${testId}-value`}>
          {latest}
        </span>
      </figcaption>
      <Plot {...plot} />
    </figure>
  );
}

export const MetricChart = memo(MetricChartView);
