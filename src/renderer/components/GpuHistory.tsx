// GPU history beyond the live window: one point per minute, kept on disk by the agent for 7 days
// (utilisation and power averaged per minute; temperature and VRAM at their peak).
import { useMemo, useState } from 'react';
import type { GpuSample } from '../../shared/types';
import { getBridge } from '../bridge';
import { useFetch } from '../lib/use-call';
import { Card } from './Card';
import { MetricChart, type ChartPoint } from './MetricChart';
import { Segmented } from './Segmented';

const SPANS = [
  { hours: 6, label: '6 h' },
  { hours: 24, label: '24 h' },
  { hours: 168, label: '7 days' },
] as const;

/** Points drawn per chart at most (7 days hold 10,080 minutes). */
const MAX_DRAWN = 360;

function pointsFor(samples: GpuSample[], index: number): ChartPoint[] {
  const every = Math.max(1, Math.ceil(samples.length / MAX_DRAWN));
  const out: ChartPoint[] = [];
  for (let i = 0; i < samples.length; i += every) {
    const s = samples[i]!;
    const d = s.devices.find((x) => x.index === index);
    out.push({
      ts: s.ts,
      util: d?.utilization != null ? d.utilization * 100 : null,
      tempC: d?.temperatureC ?? null,
      powerW: d?.powerW ?? null,
      vramUsedGb: d?.vramUsedMb != null ? d.vramUsedMb / 1024 : null,
    });
  }
  return out;
}

export function GpuHistory() {
  const [hours, setHours] = useState<number>(24);
  const history = useFetch(() => getBridge().invoke('gpu.longHistory', { hours }), [hours]);
  const samples = history.data ?? [];
  const indexes = useMemo(() => [...new Set(samples.flatMap((s) => s.devices.map((d) => d.index)))].sort((a, b) => a - b), [samples]);
  const now = useMemo(() => Date.now(), [history.data]);
  return (
    <Card
      title="GPU history"
      testId="gpu-history"
      actions={
        <Segmented
          label="History span"
          options={SPANS.map((s) => ({ value: s.hours as number, label: s.label }))}
          value={hours}
          onChange={setHours}
          testIdPrefix="history-"
        />
      }
    >
      {history.error && <p className="error-text">{history.error}</p>}
      {!history.error && indexes.length === 0 && <p className="empty">No history yet: a point is kept for every minute the GPU is read.</p>}
      {indexes.map((index) => {
        const data = pointsFor(samples, index);
        const last = data[data.length - 1];
        return (
          <div key={index} className="chart-grid-4" data-testid={`gpu-history-${index}`} data-points={data.length}>
            <MetricChart
              testId={`history-util-${index}`}
              title={`GPU ${index} utilisation (average)`}
              unit="%"
              series="util"
              data={data}
              dataKey="util"
              now={now}
              windowMinutes={hours * 60}
              top={100}
              current={last?.util ?? null}
            />
            <MetricChart
              testId={`history-vram-${index}`}
              title="VRAM (peak)"
              unit="GB"
              series="vram"
              data={data}
              dataKey="vramUsedGb"
              now={now}
              windowMinutes={hours * 60}
              digits={1}
              current={last?.vramUsedGb ?? null}
            />
            <MetricChart
              testId={`history-temp-${index}`}
              title="Temperature (peak)"
              unit="°C"
              series="temp"
              data={data}
              dataKey="tempC"
              now={now}
              windowMinutes={hours * 60}
              current={last?.tempC ?? null}
            />
            <MetricChart
              testId={`history-power-${index}`}
              title="Power (average)"
              unit="W"
              series="power"
              data={data}
              dataKey="powerW"
              now={now}
              windowMinutes={hours * 60}
              current={last?.powerW ?? null}
            />
          </div>
        );
      })}
    </Card>
  );
}
