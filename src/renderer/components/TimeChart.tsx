// A small line chart over time (Dashboard performance, a model's page): solid and dashed lines (p50 and
// p95, requests and errors), the themed grid, a value axis decided before drawing (lib/axis.ts: round
// ticks in the axis's unit, as wide as its labels), a legend of exactly the lines drawn, and tooltips.
// A line with few points shows them as dots (one point draws no line), and the edge points sit inside
// the plot, never cut in half.
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { valueAxis, type AxisKind } from '../lib/axis';
import { ChartLegend } from './ChartLegend';

export interface TimeLine {
  key: string;
  name: string;
  dashed?: boolean;
}

/** Dots while a line has this many points or fewer. */
const DOTS_UP_TO = 12;

export function TimeChart<T extends object>(p: {
  title: string;
  testId: string;
  data: T[];
  xKey: keyof T & string;
  lines: TimeLine[];
  xTick: (ts: number) => string;
  tooltipLabel: (ts: number) => string;
  /** The value axis: its kind decides ticks and labels ('unit' with `unit`). */
  axis: AxisKind;
  unit?: string;
  tooltipValue: (v: number) => string;
  tickCount?: number;
  /** Shown instead of the plot when no line has a point. */
  empty?: string;
  /** Why it is empty, as a stable code (data-empty). */
  emptyCode?: string;
}) {
  const counts = p.lines.map((l) => p.data.filter((d) => typeof (d as Record<string, unknown>)[l.key] === 'number').length);
  const points = Math.max(0, ...counts);
  let max = 0;
  for (const d of p.data) for (const l of p.lines) max = Math.max(max, Number((d as Record<string, unknown>)[l.key] ?? 0) || 0);
  const y = valueAxis(p.axis, max, p.unit ? { unit: p.unit } : {});
  return (
    <figure className="chart series-util" data-testid={p.testId} data-points={points} data-lines={p.lines.map((l) => l.name).join(',')}>
      <figcaption>
        <span className="chart-title">{p.title}</span>
      </figcaption>
      {points === 0 && p.empty ? (
        <p className="empty chart-empty small" data-empty={p.emptyCode}>
          {p.empty}
        </p>
      ) : (
        <div className="chart-body">
          <ResponsiveContainer width="100%" height={150}>
            <LineChart data={p.data} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
              <CartesianGrid className="chart-grid" vertical={false} />
              <XAxis
                dataKey={p.xKey as string}
                type="number"
                scale="time"
                domain={['dataMin', 'dataMax']}
                padding={{ left: 8, right: 8 }}
                tickFormatter={p.xTick}
                tickCount={p.tickCount ?? 5}
                minTickGap={28}
                className="chart-axis"
              />
              <YAxis width={y.width} domain={y.domain} ticks={y.ticks} interval={0} tickFormatter={y.format} className="chart-axis" />
              <Tooltip
                isAnimationActive={false}
                labelFormatter={(v) => p.tooltipLabel(Number(v))}
                formatter={(v, name) => [p.tooltipValue(Number(v)), String(name)]}
              />
              {p.lines.map((l, i) => (
                <Line
                  key={l.key}
                  type="monotone"
                  dataKey={l.key}
                  name={l.name}
                  className={`chart-line${l.dashed ? ' chart-p95' : ''}`}
                  dot={counts[i]! <= DOTS_UP_TO ? { r: l.dashed ? 2.5 : 3 } : false}
                  isAnimationActive={false}
                  strokeWidth={l.dashed ? 1.5 : 2}
                  strokeDasharray={l.dashed ? '5 3' : undefined}
                  connectNulls
                />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </div>
      )}
      {p.lines.length > 1 && points > 0 && <ChartLegend items={p.lines.map((l) => ({ label: l.name, swatch: l.dashed ? 'line-dashed' : 'line' }))} />}
    </figure>
  );
}
