// The Dashboard's banner: the agent's verdict as it is (headline, findings and next steps), plus what only
// the console sees: a hot GPU, today's failure rate, and an agent it cannot reach.
import { describe, expect, it } from 'vitest';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import type { GpuSample, ModelState, Verdict } from '../../../src/shared/types';
import { consoleVerdict, summarize } from '../../../src/renderer/lib/summary';

const model = (id: string, o: Partial<ModelState> = {}): ModelState => ({
  id,
  enabled: true,
  health: 'healthy',
  endpoints: [],
  inFlight: 0,
  queued: 0,
  maxConcurrent: 4,
  maxQueue: 8,
  ...o,
});
const serving: Verdict = {
  state: 'serving',
  tone: 'ok',
  label: 'Serving',
  headline: 'Serving 2 models to the Swan network: routed and earning.',
  reasons: [],
  routable: ['a', 'b'],
};

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
    recent: { requests: 100, errors: 4, windowMs: 30 * 60_000 },
    gateway: { enabled: false, listen: '127.0.0.1:1', running: false, keys: 0 },
    hasKey: true,
    onboarded: true,
    verdict: serving,
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
  it("serving: the verdict's line, tone ok, nothing else (4 % failures, 84 °C)", () => {
    const s = summarize(snap(), sample([84]));
    expect(s).toMatchObject({ state: 'serving', tone: 'ok', items: [], headline: serving.headline });
  });

  it("carries the verdict's findings with their next steps and tone", () => {
    const verdict: Verdict = {
      state: 'not_earning',
      tone: 'warn',
      label: 'Not earning',
      headline: 'Earnings are not enabled for this provider: requests are served, but not paid.',
      reasons: [
        {
          code: 'earnings_disabled',
          state: 'not_earning',
          text: 'Earnings are not enabled for this provider: requests are served, but not paid.',
          next: 'Ask Swan.',
        },
      ],
      routable: ['a'],
    };
    const s = summarize(snap({ verdict }), null);
    expect(s).toMatchObject({ state: 'not_earning', tone: 'warn' });
    expect(s.items).toEqual([{ code: 'earnings_disabled', tone: 'warn', text: verdict.reasons[0]!.text, next: 'Ask Swan.' }]);
    const down: Verdict = {
      ...verdict,
      state: 'degraded',
      tone: 'bad',
      reasons: [{ code: 'engine_down', state: 'degraded', text: 'The engine of a is not running.' }],
      routable: [],
    };
    expect(summarize(snap({ verdict: down }), null)).toMatchObject({ tone: 'bad', items: [{ code: 'engine_down', tone: 'bad' }] });
  });

  it('an agent the console cannot reach is stopped, whatever the last snapshot said', () => {
    expect(consoleVerdict(snap(), 'reconnecting')).toMatchObject({ state: 'stopped', tone: 'bad', label: 'Agent not reachable' });
    expect(codes(summarize(snap(), null, 'reconnecting'))).toEqual(['agent_stopped']);
    expect(consoleVerdict(snap(), 'open')).toBe(serving);
  });

  it('adds a GPU at or above 85 °C and a failure rate at or above 5 % as warnings', () => {
    expect(codes(summarize(snap(), sample([60, 85])))).toEqual(['gpu_hot']);
    expect(summarize(snap(), sample([60, 85])).items[0]!.text).toMatch(/GPU 1 is at 85 °C/);
    expect(summarize(snap(), sample([60, 85])).tone).toBe('warn');
    expect(codes(summarize(snap({ recent: { requests: 100, errors: 5, windowMs: 30 * 60_000 } }), null))).toEqual(['failures']);
    expect(summarize(snap({ recent: { requests: 100, errors: 5, windowMs: 30 * 60_000 } }), null).items[0]!.text).toMatch(
      /^5 of 100 requests failed in the last 30 minutes/,
    );
    expect(codes(summarize(snap({ recent: { requests: 0, errors: 0, windowMs: 30 * 60_000 } }), null))).toEqual([]);
    expect(codes(summarize(snap(), { ...sample([99]), available: false }))).toEqual([]);
  });

  it('the failure rate is said over a recent window: a bad morning does not stay up after the engine recovered', () => {
    // 24 of 67 failed today, none of the 20 of the last 30 minutes: nothing to say now.
    const recovered = snap({
      today: { requests: 67, errors: 24, tokensIn: 0, tokensOut: 0, earnings: 0 },
      recent: { requests: 20, errors: 0, windowMs: 30 * 60_000 },
    });
    expect(codes(summarize(recovered, null))).toEqual([]);
    expect(summarize(recovered, null).tone).toBe('ok');
  });
});
