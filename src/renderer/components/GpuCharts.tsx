// Per-GPU live charts (utilisation, VRAM, temperature, power) and the host's CPU and memory.
import { useMemo } from 'react';
import type { GpuInfo, GpuServingState } from '../../shared/types';
import { getBridge } from '../bridge';
import { useCall } from '../lib/use-call';
import { series } from '../store/actions';
import { downsample } from '../store/series';
import { useStore } from '../store/store';
import { BusyButton } from './BusyButton';
import { Card } from './Card';
import { ErrorText } from './Field';
import { MetricChart, type ChartPoint } from './MetricChart';
import { Segmented } from './Segmented';

/** Points drawn per chart at most (the 60-minute window holds 3,600 samples). */
const MAX_DRAWN = 300;

/**
 * How often a window's plot is redrawn: once per drawn point's span (5 min: every second; 15 min: every
 * 3 s; 60 min: every 12 s). Drawing faster would only redraw the same downsampled points. The value next
 * to each chart's title stays live every second.
 */
export function redrawMs(windowMinutes: number): number {
  return Math.max(1000, (windowMinutes * 60_000) / MAX_DRAWN);
}

/**
 * The plot's data and time axis, recomputed only when a new drawn point is due: every sample while the
 * window holds no more samples than are drawn, then once per drawn point's span. Also returns the
 * newest sample, for the live value beside the title.
 */
function usePlotData<P extends { ts: number }>(
  windowMinutes: number,
  read: (now: number) => P[],
  key: string,
): { data: ChartPoint[]; now: number; last: P | undefined } {
  const version = useStore((s) => s.seriesVersion);
  const now = Date.now();
  const raw = read(now);
  const due = raw.length <= MAX_DRAWN ? `v${version}` : `t${Math.floor(now / redrawMs(windowMinutes))}`;
  // `raw` and `now` are read fresh on every render; `due` says when the drawn points actually change.
  const plot = useMemo(() => ({ data: downsample(raw, MAX_DRAWN) as unknown as ChartPoint[], now }), [due, windowMinutes, key]);
  return { ...plot, last: raw[raw.length - 1] };
}

export const WINDOWS = [5, 15, 60] as const;
export type WindowMinutes = (typeof WINDOWS)[number];

export function WindowPicker({ value, onChange }: { value: WindowMinutes; onChange: (w: WindowMinutes) => void }) {
  return (
    <Segmented label="Chart window" options={WINDOWS.map((w) => ({ value: w, label: `${w} min` }))} value={value} onChange={onChange} testIdPrefix="window-" />
  );
}

/** A "used of total" chart (VRAM, memory): the total is named in the title and drawn as a dashed limit line. */
function UsedOfTotalChart(p: {
  testId: string;
  what: string;
  series: 'vram' | 'ram';
  usedKey: string;
  totalKey: string;
  totalGb: number | null | undefined;
  data: ChartPoint[];
  now: number;
  windowMinutes: number;
  current: number | null;
}) {
  return (
    <MetricChart
      testId={p.testId}
      title={`${p.what} used${p.totalGb ? ` of ${p.totalGb.toFixed(1)} GB` : ''}`}
      unit="GB"
      series={p.series}
      data={p.data}
      dataKey={p.usedKey}
      limitKey={p.totalKey}
      limitLabel={`${p.what} total`}
      now={p.now}
      windowMinutes={p.windowMinutes}
      {...(p.totalGb ? { top: Math.ceil(p.totalGb) } : {})}
      digits={1}
      current={p.current}
    />
  );
}

const GPU_CAUSE_LABEL: Record<NonNullable<GpuServingState['cause']>, string> = {
  given_back: 'Given back',
  gpu_busy: 'Paused: in use by another program',
  gpu_hot: 'Paused: over its ceiling',
  schedule: 'Paused by your schedule',
};

/**
 * On a rig with several GPUs: whether this one serves, and the owner's switch to give it back (its models stop
 * being offered and, with PauseFreesGpu, its memory is freed) or to let it serve again.
 */
function GpuServingLine({ index }: { index: number }) {
  const state = useStore((s) => s.snapshot?.gpuServing?.find((g) => g.index === index));
  const [giveBack, call] = useCall((back: boolean) => getBridge().invoke('gpu.giveBack', { index, givenBack: back }));
  if (!state) return null;
  const given = state.cause === 'given_back';
  return (
    <div className="gpu-serving row" data-testid={`gpu-serving-${index}`} data-serving={state.serving} data-cause={state.cause ?? ''}>
      <span className={state.serving ? 'ok-text' : 'warn-text'}>
        {state.serving ? 'Serving' : GPU_CAUSE_LABEL[state.cause ?? 'given_back']}
        {!state.serving && state.reason && state.cause !== 'given_back' ? ` — ${state.reason}` : ''}
      </span>{' '}
      <BusyButton
        className="small-button"
        busy={call.pending}
        busyLabel={given ? 'Starting…' : 'Giving back…'}
        onClick={() => void giveBack(!given)}
        data-testid={`gpu-give-back-${index}`}
        title={
          given
            ? 'Offer the models on this GPU to the network again'
            : 'Stop serving on this GPU; the others keep serving (with [Agent] PauseFreesGpu its engines also stop, freeing its memory)'
        }
      >
        {given ? 'Serve on this GPU again' : 'Give this GPU back'}
      </BusyButton>
      <ErrorText error={call.error} />
    </div>
  );
}

export function GpuPanel({ index, info, windowMinutes }: { index: number; info?: GpuInfo; windowMinutes: WindowMinutes }) {
  useStore((s) => s.seriesVersion); // re-render on every recorded sample; the points live in `series`
  const { data, now, last } = usePlotData(windowMinutes, (t) => series.gpuWindow(index, windowMinutes, t), `gpu-${index}`);
  const totalGb = last?.vramTotalGb ?? (info ? info.vramTotalMb / 1024 : null);
  const name = info ? `GPU ${index} · ${info.model}` : `GPU ${index}`;
  return (
    <Card title={name} className="gpu-panel" testId={`gpu-panel-${index}`}>
      <GpuServingLine index={index} />
      {info?.sharedMemory && <p className="muted small">Memory is shared with the CPU (unified memory).</p>}
      <div className="chart-grid-4">
        <MetricChart
          testId={`chart-util-${index}`}
          title="Utilisation"
          unit="%"
          series="util"
          data={data}
          dataKey="util"
          now={now}
          windowMinutes={windowMinutes}
          top={100}
          current={last?.util ?? null}
        />
        <UsedOfTotalChart
          testId={`chart-vram-${index}`}
          what="VRAM"
          series="vram"
          usedKey="vramUsedGb"
          totalKey="vramTotalGb"
          totalGb={totalGb}
          data={data}
          now={now}
          windowMinutes={windowMinutes}
          current={last?.vramUsedGb ?? null}
        />
        <MetricChart
          testId={`chart-temp-${index}`}
          title="Temperature"
          unit="°C"
          series="temp"
          data={data}
          dataKey="tempC"
          now={now}
          windowMinutes={windowMinutes}
          current={last?.tempC ?? null}
        />
        <MetricChart
          testId={`chart-power-${index}`}
          title="Power"
          unit="W"
          series="power"
          data={data}
          dataKey="powerW"
          now={now}
          windowMinutes={windowMinutes}
          current={last?.powerW ?? null}
        />
      </div>
    </Card>
  );
}

export function HostPanel({ windowMinutes }: { windowMinutes: WindowMinutes }) {
  useStore((s) => s.seriesVersion);
  const { data, now, last } = usePlotData(windowMinutes, (t) => series.hostWindow(windowMinutes, t), 'host');
  return (
    <Card title="This machine" className="host-panel" testId="host-panel">
      <div className="chart-grid-2">
        <MetricChart
          testId="chart-cpu"
          title="CPU"
          unit="%"
          series="cpu"
          data={data}
          dataKey="cpu"
          now={now}
          windowMinutes={windowMinutes}
          top={100}
          current={last?.cpu ?? null}
        />
        <UsedOfTotalChart
          testId="chart-ram"
          what="Memory"
          series="ram"
          usedKey="ramUsedGb"
          totalKey="ramTotalGb"
          totalGb={last?.ramTotalGb}
          data={data}
          now={now}
          windowMinutes={windowMinutes}
          current={last?.ramUsedGb ?? null}
        />
      </div>
    </Card>
  );
}

/** GPUs to chart: those detected, plus any the sampler reports that detection missed. */
export function useGpuIndexes(): { index: number; info?: GpuInfo }[] {
  const gpus = useStore((s) => s.snapshot?.gpu.gpus);
  useStore((s) => s.seriesVersion);
  const byIndex = new Map<number, GpuInfo | undefined>();
  for (const g of gpus ?? []) byIndex.set(g.index, g);
  for (const i of series.gpuIndexes()) if (!byIndex.has(i)) byIndex.set(i, undefined);
  return [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([index, info]) => ({ index, info }));
}
