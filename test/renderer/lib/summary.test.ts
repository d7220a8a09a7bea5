// The Dashboard's operational line: each condition the owner must see, and "all is well" otherwise.
import { describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/bridge';
import type { GpuSample, ModelState } from '../../../src/shared/types';
import { summarize } from '../../../src/renderer/lib/summary';

const model = (id: string, o: Partial<ModelState> = {}): ModelState => ({ id, enabled: true, health: 'healthy', endpoints: [], inFlight: 0, queued: 0, maxConcurrent: 4, maxQueue: 8, ...o });

function snap(o: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return {
    version: '0.1.0',
    nodeId: 'n',
    nodeName: 'rig',
    link: { state: 'connected', hubUrl: 'ws://h/ws', since: 0, attempts: 0 },
    pause: { paused: false },
    gpu: { gpus: [], detectedAt: 0 },
    engines: [],
    models: [model('a'), model('b')],
    today: { requests: 100, errors: 4, tokensIn: 0, tokensOut: 0, earnings: 0 },
    gateway: { enabled: false, listen: '127.0.0.1:1', running: false, keys: 0 },
    hasKey: true,
    onboarded: true,
    ...o,
  };
}

const sample = (temps: (number | null)[]): GpuSample => ({
  ts: 0,
  available: true,
  devices: temps.map((t, index) => ({ index, utilization: 0.5, vramUsedMb: 1, vramTotalMb: 2, temperatureC: t, powerW: 1, powerLimitW: 2, fanPercent: 1 })),
  cpuPercent: 1,
  ramUsedMb: 1,
  ramTotalMb: 2,
});

const codes = (s: ReturnType<typeof summarize>) => s.items.map((i) => i.code);

describe('operational summary', () => {
  it('says all is well when nothing needs attention (4 % failures, 84 °C)', () => {
    const s = summarize(snap(), sample([84]));
    expect(s).toMatchObject({ tone: 'ok', items: [] });
    expect(s.ok).toMatch(/serving 2 models/);
  });

  it('names a disconnected link, a refused key, and a pause', () => {
    expect(codes(summarize(snap({ link: { state: 'backoff', hubUrl: 'x', since: 0, attempts: 2, reason: 'connection refused' } }), null))).toEqual(['disconnected']);
    expect(summarize(snap({ link: { state: 'backoff', hubUrl: 'x', since: 0, attempts: 2, reason: 'connection refused' } }), null).tone).toBe('bad');
    expect(codes(summarize(snap({ link: { state: 'auth_failed', hubUrl: 'x', since: 0, attempts: 1 } }), null))).toEqual(['key_refused']);
    expect(codes(summarize(snap({ pause: { paused: true, cause: 'manual' } }), null))).toEqual(['paused']);
  });

  it('names no models, all switched off, unhealthy and degraded models', () => {
    expect(codes(summarize(snap({ models: [] }), null))).toEqual(['no_models']);
    expect(codes(summarize(snap({ models: [model('a', { enabled: false })] }), null))).toEqual(['none_enabled']);
    const s = summarize(snap({ models: [model('a', { health: 'unhealthy' }), model('b', { health: 'degraded' }), model('c', { health: 'unhealthy', enabled: false })] }), null);
    expect(codes(s)).toEqual(['unhealthy', 'degraded']);
    expect(s.items[0]!.text).toContain('a');
    expect(s.items[0]!.text).not.toContain('c');
  });

  it('names a GPU at or above 85 °C and a failure rate at or above 5 %', () => {
    expect(codes(summarize(snap(), sample([60, 85])))).toEqual(['gpu_hot']);
    expect(summarize(snap(), sample([60, 85])).items[0]!.text).toMatch(/GPU 1 is at 85 °C/);
    expect(codes(summarize(snap({ today: { requests: 100, errors: 5, tokensIn: 0, tokensOut: 0, earnings: 0 } }), null))).toEqual(['failures']);
    expect(codes(summarize(snap({ today: { requests: 0, errors: 0, tokensIn: 0, tokensOut: 0, earnings: 0 } }), null))).toEqual([]);
    expect(codes(summarize(snap(), { ...sample([99]), available: false }))).toEqual([]);
  });
});
