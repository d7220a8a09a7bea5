// A chart's value axis, decided before it is drawn: round ticks from 0 to a round top, each label in the
// axis's unit (money with its currency), and the axis as wide as its longest label, so no label is clipped
// (",000 ms") or wrapped ("1,000" over "tok/s") at any width. Pure; the chart components use it.
import { fmtNumber } from './format';

export type AxisKind = 'duration' | 'rate' | 'count' | 'money' | 'percent' | 'unit';

export interface ValueAxis {
  domain: [number, number];
  ticks: number[];
  format: (v: number) => string;
  /** Pixels for the tick labels (11 px text) and the gap to the plot. */
  width: number;
}

/** 1, 2, 2.5 or 5 times a power of ten, at least `raw`. */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const p = 10 ** Math.floor(Math.log10(raw));
  const f = raw / p;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
}

/** Decimals that show a step exactly (0.25 → 2, 5 → 0, 0.0005 → 4). */
function digitsOf(step: number): number {
  for (let d = 0; d < 8; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 8;
}

const DEFAULT_MAX: Record<AxisKind, number> = { duration: 1000, rate: 10, count: 4, money: 0.01, percent: 100, unit: 1 };

/** The width of an 11 px tick label: measured in the page's font where there is a canvas, else a wide estimate. */
let measureCtx: CanvasRenderingContext2D | null | undefined;
export function labelWidth(text: string): number {
  if (measureCtx === undefined) {
    measureCtx = null;
    if (typeof document !== 'undefined') {
      const ctx = document.createElement('canvas').getContext('2d');
      if (ctx) {
        ctx.font = `11px ${getComputedStyle(document.body).fontFamily || 'sans-serif'}`;
        measureCtx = ctx;
      }
    }
  }
  return measureCtx ? measureCtx.measureText(text).width : text.length * 7.4;
}

/** Room beside the label: recharts' tick line (6 px) and gap, and a margin so the label never wraps. */
const AXIS_PAD = 16;

export function valueAxis(kind: AxisKind, dataMax: number, o: { unit?: string; top?: number; tickCount?: number } = {}): ValueAxis {
  const max = o.top ?? (Number.isFinite(dataMax) && dataMax > 0 ? dataMax : DEFAULT_MAX[kind]);
  let step = niceStep(max / (o.tickCount ?? 4));
  if (kind === 'count') step = Math.max(1, Math.ceil(step));
  const top = o.top ?? Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = 0; v <= top + step * 1e-6; v += step) ticks.push(Number(v.toFixed(10)));
  const format = formatter(kind, step, top, o.unit);
  const longest = Math.max(...ticks.map((t) => labelWidth(format(t))));
  return { domain: [0, top], ticks, format, width: Math.ceil(longest) + AXIS_PAD };
}

function formatter(kind: AxisKind, step: number, top: number, unit = ''): (v: number) => string {
  switch (kind) {
    case 'duration': {
      // Seconds once the axis reaches 2 s: "1.5 s" rather than "1,500 ms".
      if (top >= 2000) {
        const d = digitsOf(step / 1000);
        return (v) => `${fmtNumber(v / 1000, d)} s`;
      }
      return (v) => `${fmtNumber(v, digitsOf(step))} ms`;
    }
    case 'money': {
      const d = Math.max(2, digitsOf(step));
      return (v) => `$${fmtNumber(v, d)}`;
    }
    case 'percent':
      return (v) => `${fmtNumber(v, digitsOf(step))} %`;
    case 'rate':
    case 'count':
      // Thousands as "k" so a busy axis stays narrow; the unit is in the chart's title.
      if (top >= 10_000) {
        const d = digitsOf(step / 1000);
        return (v) => (v === 0 ? '0' : `${fmtNumber(v / 1000, d)}k`);
      }
      return (v) => fmtNumber(v, digitsOf(step));
    case 'unit':
      return (v) => `${fmtNumber(v, digitsOf(step))}${unit ? ` ${unit}` : ''}`;
  }
}
