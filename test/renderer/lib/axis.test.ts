// Value axes decided before drawing: round ticks, labels in the axis's unit (money with its currency), and
// the axis as wide as its longest label, so labels are never clipped or wrapped.
import { expect, it } from 'vitest';
import { niceStep, valueAxis } from '../../../src/renderer/lib/axis';

const labels = (a: ReturnType<typeof valueAxis>) => a.ticks.map(a.format);

it('round steps', () => {
  expect([0.3, 1, 1.2, 2.2, 4, 7, 30, 0.0004].map(niceStep)).toEqual([0.5, 1, 2, 2.5, 5, 10, 50, 0.0005]);
});

it('durations: milliseconds up to 2 s, then seconds; the width holds the longest label', () => {
  const ms = valueAxis('duration', 640);
  expect(labels(ms)).toEqual(['0 ms', '200 ms', '400 ms', '600 ms', '800 ms']);
  const s = valueAxis('duration', 6200);
  expect(labels(s)).toEqual(['0 s', '2 s', '4 s', '6 s', '8 s']);
  expect(labels(valueAxis('duration', 2300))).toEqual(['0 s', '1 s', '2 s', '3 s']);
  expect(labels(valueAxis('duration', 2300, { tickCount: 6 }))).toEqual(['0.0 s', '0.5 s', '1.0 s', '1.5 s', '2.0 s', '2.5 s']);
  const wide = valueAxis('duration', 1500);
  expect(labels(wide)).toEqual(['0 ms', '500 ms', '1,000 ms', '1,500 ms']);
  expect(wide.width).toBeGreaterThanOrEqual('1,500 ms'.length * 7);
});

it('rates and counts: plain numbers, thousands as k; counts in whole steps', () => {
  expect(labels(valueAxis('rate', 1000))).toEqual(['0', '250', '500', '750', '1,000']);
  expect(labels(valueAxis('rate', 42_000))).toEqual(['0', '20k', '40k', '60k']);
  expect(labels(valueAxis('count', 2))).toEqual(['0', '1', '2']);
});

it('money carries its currency with the decimals its step needs', () => {
  expect(labels(valueAxis('money', 0.0021))).toEqual(['$0.000', '$0.001', '$0.002', '$0.003']);
  expect(labels(valueAxis('money', 0.0018))).toEqual(['$0.0000', '$0.0005', '$0.0010', '$0.0015', '$0.0020']);
  expect(labels(valueAxis('money', 3.2))).toEqual(['$0.00', '$1.00', '$2.00', '$3.00', '$4.00']);
});

it('a fixed top (percent, a VRAM total) and an empty series', () => {
  expect(labels(valueAxis('percent', 37, { top: 100 }))).toEqual(['0 %', '25 %', '50 %', '75 %', '100 %']);
  expect(valueAxis('unit', 3, { unit: 'GB', top: 24 }).domain).toEqual([0, 24]);
  expect(valueAxis('duration', Number.NaN).domain).toEqual([0, 1000]);
});
