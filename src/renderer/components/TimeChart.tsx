// A small line chart over time (Dashboard performance, a model's page): solid and dashed lines (p50 and
// p95, requests and errors), the themed grid and axes, tooltips in the given units.
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';

export interface TimeLine {
  key: string;
  name: string;
  dashed?: boolean;
}

export function TimeChart<T extends object>(p: {
  title: string;
  testId: string;
  data: T[];
  xKey: keyof T & string;
  lines: TimeLine[];
  xTick: (ts: number) => string;
  tooltipLabel: (ts: number) => string;
  yTick: (v: number) => string;
  tooltipValue: (v: number) => string;
  yWidth?: number;
  tickCount?: number;
  /** Points with a value (dots are drawn while there are 3 or fewer). */
  points?: number;
}) {
  const dots = p.points !== undefined && p.points <= 3;
  return (
    <figure className="chart series-util" data-testid={p.testId} data-points={p.points}>
      <figcaption>
        <span className="chart-title">{p.title}</span>
      </figcaption>
      <div className="chart-body">
        <ResponsiveContainer width="100%" height={150}>
          <LineChart data={p.data} margin={{ top: 6, right: 10, bottom: 2, left: 0 }}>
            <CartesianGrid className="chart-grid" vertical={false} />
            <XAxis dataKey={p.xKey as string} type="number" scale="time" domain={['dataMin', 'dataMax']} tickFormatter={p.xTick} tickCount={p.tickCount ?? 5} minTickGap={24} className="chart-axis" />
            <YAxis width={p.yWidth ?? 56} domain={[0, 'auto']} tickFormatter={p.yTick} className="chart-axis" />
            <Tooltip isAnimationActive={false} labelFormatter={(v) => p.tooltipLabel(Number(v))} formatter={(v, name) => [p.tooltipValue(Number(v)), String(name)]} />
            {p.lines.map((l) => (
              <Line
                key={l.key}
                type="monotone"
                dataKey={l.key}
                name={l.name}
                className={`chart-line${l.dashed ? ' chart-p95' : ''}`}
                dot={dots ? { r: l.dashed ? 2 : 3 } : false}
                isAnimationActive={false}
                strokeWidth={l.dashed ? 1.5 : 2}
                strokeDasharray={l.dashed ? '5 3' : undefined}
                connectNulls
              />
            ))}
          </LineChart>
        </ResponsiveContainer>
      </div>
    </figure>
  );
}
