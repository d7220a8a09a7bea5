import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createEventBatcher } from '../../src/shared/batcher';
import type { BridgeEvent } from '../../src/shared/bridge/events';
import type { AgentSnapshot } from '../../src/shared/views/snapshot';
import type { GpuSample, RequestView } from '../../src/shared/types';

const snap = (nodeName: string): AgentSnapshot => ({ nodeName, version: '0', nodeId: 'n' }) as unknown as AgentSnapshot; // only identity matters here
const sample = (ts: number): GpuSample => ({ ts, available: true, devices: [], cpuPercent: null, ramUsedMb: null, ramTotalMb: null });
const req = (id: string, status: RequestView['status']): RequestView => ({
  id,
  source: 'hub',
  model: 'm',
  status,
  stream: true,
  startedAt: 1,
  tokensIn: 1,
  tokensOut: 0,
  estimated: false,
});

describe('createEventBatcher', () => {
  let batches: BridgeEvent[][];
  beforeEach(() => {
    vi.useFakeTimers();
    batches = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends nothing before the interval and one batch after it', () => {
    const b = createEventBatcher((e) => batches.push(e), 250);
    for (let i = 0; i < 500; i++) b.push({ type: 'request.text', id: 'r1', delta: 'x' });
    expect(batches).toHaveLength(0);
    vi.advanceTimersByTime(249);
    expect(batches).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toEqual([{ type: 'request.text', id: 'r1', delta: 'x'.repeat(500) }]);
    b.close();
  });

  it('keeps only the last snapshot and the last gpu sample of a batch', () => {
    const b = createEventBatcher((e) => batches.push(e));
    b.push({ type: 'snapshot', snapshot: snap('a') });
    b.push({ type: 'gpu.sample', sample: sample(1) });
    b.push({ type: 'log', entry: { ts: 1, level: 'info', subsystem: 's', msg: 'one' } });
    b.push({ type: 'snapshot', snapshot: snap('b') });
    b.push({ type: 'gpu.sample', sample: sample(2) });
    b.flush();
    expect(batches).toHaveLength(1);
    expect(batches[0]!.map((e) => e.type)).toEqual(['log', 'snapshot', 'gpu.sample']);
    const [, s, g] = batches[0]!;
    expect(s).toMatchObject({ snapshot: { nodeName: 'b' } });
    expect(g).toMatchObject({ sample: { ts: 2 } });
  });

  it('joins text deltas per request, keeps the latest update in the first update position, and keeps order', () => {
    const b = createEventBatcher((e) => batches.push(e));
    b.push({ type: 'request.update', request: req('r1', 'running') });
    b.push({ type: 'request.text', id: 'r1', delta: 'Hel' });
    b.push({ type: 'request.update', request: req('r2', 'running') });
    b.push({ type: 'request.text', id: 'r2', delta: 'A' });
    b.push({ type: 'request.text', id: 'r1', delta: 'lo' });
    b.push({ type: 'request.update', request: req('r1', 'ok') });
    b.push({ type: 'request.text', id: 'r2', delta: 'B' });
    b.flush();
    expect(batches[0]).toEqual([
      { type: 'request.update', request: req('r1', 'ok') },
      { type: 'request.text', id: 'r1', delta: 'Hello' },
      { type: 'request.update', request: req('r2', 'running') },
      { type: 'request.text', id: 'r2', delta: 'AB' },
    ]);
  });

  it('does not mutate the events it was given', () => {
    const b = createEventBatcher((e) => batches.push(e));
    const first: BridgeEvent = { type: 'request.text', id: 'r', delta: 'a' };
    b.push(first);
    b.push({ type: 'request.text', id: 'r', delta: 'b' });
    b.flush();
    expect(first).toEqual({ type: 'request.text', id: 'r', delta: 'a' });
    expect(batches[0]).toEqual([{ type: 'request.text', id: 'r', delta: 'ab' }]);
  });

  it('starts fresh after a flush: deltas of the next batch are not joined into the sent one', () => {
    const b = createEventBatcher((e) => batches.push(e));
    b.push({ type: 'request.text', id: 'r', delta: 'a' });
    b.flush();
    b.push({ type: 'request.text', id: 'r', delta: 'b' });
    vi.advanceTimersByTime(250);
    expect(batches).toEqual([[{ type: 'request.text', id: 'r', delta: 'a' }], [{ type: 'request.text', id: 'r', delta: 'b' }]]);
  });

  it('flush with nothing buffered sends nothing', () => {
    const b = createEventBatcher((e) => batches.push(e));
    b.flush();
    vi.advanceTimersByTime(1000);
    expect(batches).toHaveLength(0);
  });

  it('close sends what is left and drops later pushes', () => {
    const b = createEventBatcher((e) => batches.push(e));
    b.push({ type: 'log', entry: { ts: 1, level: 'warn', subsystem: 's', msg: 'm' } });
    b.close();
    b.push({ type: 'log', entry: { ts: 2, level: 'warn', subsystem: 's', msg: 'late' } });
    vi.advanceTimersByTime(1000);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(1);
  });

  it('sends early when a flood of distinct events would grow without bound', () => {
    const b = createEventBatcher((e) => batches.push(e), 10_000);
    for (let i = 0; i < 12_000; i++) b.push({ type: 'log', entry: { ts: i, level: 'debug', subsystem: 's', msg: String(i) } });
    expect(batches.length).toBe(2);
    expect(batches.every((x) => x.length === 5000)).toBe(true);
    b.close();
    expect(batches.flat()).toHaveLength(12_000);
    expect(batches.flat().map((e) => (e.type === 'log' ? e.entry.ts : -1))).toEqual(Array.from({ length: 12_000 }, (_, i) => i));
  });
});
