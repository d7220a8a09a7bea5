// Pure parts of the renderer's store: bounded rings and lists, downsampling, text joining.
import { describe, expect, it } from 'vitest';
import type { GpuSample, RequestView } from '../../../src/shared/types';
import { RequestList } from '../../../src/renderer/store/request-list';
import { Ring } from '../../../src/shared/ring';
import { downsample, LiveSeries, SERIES_CAPACITY } from '../../../src/renderer/store/series';
import { joinFetched, TextCache } from '../../../src/renderer/store/text-cache';

const req = (id: string, startedAt: number, status: RequestView['status'] = 'running'): RequestView => ({
  id,
  source: 'hub',
  model: 'm',
  status,
  stream: true,
  startedAt,
  tokensIn: 1,
  tokensOut: 0,
  estimated: false,
});

const sample = (ts: number, util: number, available = true): GpuSample => ({
  ts,
  available,
  devices: available
    ? [{ index: 0, utilization: util, vramUsedMb: 2048, vramTotalMb: 8192, temperatureC: 50, powerW: 100, powerLimitW: 200, fanPercent: 30 }]
    : [],
  cpuPercent: 10,
  ramUsedMb: 1024,
  ramTotalMb: 4096,
});

describe('Ring', () => {
  it('keeps the newest items up to its capacity, oldest first', () => {
    const r = new Ring<number>(3);
    for (let i = 1; i <= 5; i++) r.push(i);
    expect(r.toArray()).toEqual([3, 4, 5]);
    expect(r.size).toBe(3);
    expect(r.last()).toBe(5);
    expect(r.tailWhile((x) => x >= 4)).toEqual([4, 5]);
  });
});

describe('LiveSeries', () => {
  it('holds 60 minutes at 1 Hz per GPU and no more', () => {
    const s = new LiveSeries();
    const t0 = 1_000_000;
    for (let i = 0; i < SERIES_CAPACITY + 500; i++) s.record(sample(t0 + i * 1000, 0.5));
    const now = t0 + (SERIES_CAPACITY + 499) * 1000;
    expect(s.gpuWindow(0, 60, now)).toHaveLength(SERIES_CAPACITY);
    expect(s.gpuWindow(0, 5, now)).toHaveLength(301);
    expect(s.hostWindow(15, now)).toHaveLength(901);
  });

  it('stores utilisation as percent and memory in GB, skips repeats and unavailable devices', () => {
    const s = new LiveSeries();
    expect(s.record(sample(1000, 0.42))).toBe(true);
    expect(s.record(sample(1000, 0.9))).toBe(false);
    expect(s.record(sample(2000, 0, false))).toBe(true);
    const pts = s.gpuWindow(0, 5, 3000);
    expect(pts).toEqual([{ ts: 1000, util: 42, vramUsedGb: 2, vramTotalGb: 8, tempC: 50, powerW: 100 }]);
    expect(s.hostWindow(5, 3000)).toHaveLength(2);
  });

  it('downsamples to a bounded number of points by averaging', () => {
    const pts = Array.from({ length: 3600 }, (_, i) => ({ ts: i, v: i % 2 === 0 ? 0 : 10, n: null as number | null }));
    const out = downsample(pts, 300);
    expect(out.length).toBeLessThanOrEqual(300);
    expect(out[0]).toEqual({ ts: 11, v: 5, n: null });
    expect(downsample(pts.slice(0, 10), 300)).toHaveLength(10);
  });
});

describe('RequestList', () => {
  it('updates in place, appends new ones and drops the oldest beyond the bound', () => {
    const list = new RequestList(3);
    let arr = list.apply([req('a', 1), req('b', 2)]);
    const before = arr;
    arr = list.apply([req('a', 1, 'ok')]);
    expect(arr).not.toBe(before);
    expect(arr.map((r) => `${r.id}:${r.status}`)).toEqual(['a:ok', 'b:running']);
    arr = list.apply([req('c', 3), req('d', 4)]);
    expect(arr.map((r) => r.id)).toEqual(['b', 'c', 'd']);
    expect(list.get('a')).toBeUndefined();
    arr = list.apply([req('b', 2, 'error'), req('e', 5)]);
    expect(arr.map((r) => `${r.id}:${r.status}`)).toEqual(['c:running', 'd:running', 'e:running']);
    // an update for a dropped request comes back as new
    arr = list.apply([req('a', 1, 'ok')]);
    expect(arr.map((r) => r.id)).toEqual(['d', 'e', 'a']);
    expect(list.get('e')?.id).toBe('e');
  });

  it('stays consistent over many more requests than it keeps', () => {
    const list = new RequestList(10_000);
    for (let batch = 0; batch < 30; batch++) list.apply(Array.from({ length: 1000 }, (_, i) => req(`r${batch * 1000 + i}`, batch * 1000 + i)));
    expect(list.size).toBe(10_000);
    const arr = list.apply([req('r29999', 29999, 'ok'), req('r20000', 20000, 'ok')]);
    expect(arr[0]!.id).toBe('r20000');
    expect(arr[0]!.status).toBe('ok');
    expect(arr[arr.length - 1]!.status).toBe('ok');
    expect(list.get('r19999')).toBeUndefined();
  });

  it('reset keeps the newest by start time', () => {
    const list = new RequestList(2);
    expect(list.reset([req('x', 3), req('y', 1), req('z', 2)]).map((r) => r.id)).toEqual(['z', 'x']);
    expect(list.apply([req('x', 3, 'ok')]).map((r) => r.status)).toEqual(['running', 'ok']);
  });
});

describe('text of requests', () => {
  it('keeps text for a bounded number of requests, never evicting the pinned one', () => {
    const t = new TextCache(2);
    t.append('a', 'A');
    t.pin('a');
    t.append('b', 'B');
    t.append('c', 'C');
    expect(t.has('a')).toBe(true);
    expect(t.has('b')).toBe(false);
    t.append('a', 'A');
    expect(t.get('a')).toBe('AA');
  });

  it('joins fetched text with deltas received during the fetch without doubling', () => {
    expect(joinFetched('Hello wor', 'ld')).toBe('Hello world');
    expect(joinFetched('Hello world', 'world')).toBe('Hello world');
    expect(joinFetched('Hello wo', 'world!')).toBe('Hello world!');
    expect(joinFetched('abc', '')).toBe('abc');
  });
});
