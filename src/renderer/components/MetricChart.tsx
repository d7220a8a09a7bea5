// One live line chart: a numeric time axis over the chosen window, units on the value axis, no dots and
// no animation (live data). `data-points` exposes how many points are drawn (tests wait on it).
import { memo } from 'react';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
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
  yDomain?: [number | 'auto' | 'dataMax', number | 'auto' | 'dataMax'];
  digits?: number;
  series: 'util' | 'vram' | 'temp' | 'power' | 'cpu' | 'ram';
  current: number | null;
}

function MetricChartView(p: MetricChartProps) {
  // The axis spans the chosen window once there is that much data; until then, the data there is.
  const first = p.data[0]?.ts;
  const from = Math.max(p.now - p.windowMinutes * 60_000, first !== undefined && first < p.now - 10_000 ? first : p.now - 10_000);
  const tickFmt = p.windowMinutes <= 5 ? fmtTime : fmtClock;
  const latest = p.current === null ? '—' : `${fmtNumber(p.current, p.digits ?? 0)} ${p.unit}`;
  return (
    <figure className={`chart series-${p.series}`} data-testid={p.testId} data-points={p.data.length}>
      <figcaption>
        <span className="chart-title">{p.title}</span>
        <span className="chart-value" data-testid={`${p.testId}-value`}>
          {latest}
        </span>
      </figcaption>
      <div className="chart-body">
        <ResponsiveContainer width="100%" height={150}>
          <LineChart data={p.data} margin={{ top: 6, right: 10, bottom: 2, left: 0 }}>
            <CartesianGrid className="chart-grid" vertical={false} />
            <XAxis
              dataKey="ts"
              type="number"
              scale="time"
              domain={[from, p.now]}
              allowDataOverflow
              tickFormatter={(v: number) => tickFmt(v)}
              tickCount={5}
              minTickGap={24}
              className="chart-axis"
            />
            <YAxis
              width={56}
              domain={p.yDomain ?? [0, 'auto']}
              allowDataOverflow={false}
              tickFormatter={(v: number) => `${fmtNumber(v, v !== 0 && Math.abs(v) < 10 ? 1 : 0)} ${p.unit}`}
              className="chart-axis"
            />
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
            <Line type="monotone" dataKey={p.dataKey} name={p.title} className="chart-line" dot={false} isAnimationActive={false} strokeWidth={2} connectNulls={false} />
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

export const MetricChart = memo(MetricChartView);
