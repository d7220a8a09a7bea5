// A burst of 100 streaming requests through the scheduler to two real HTTP test engines:
// no engine ever runs more than its limit, the model's capacity is shared between both,
// the excess is refused at once with 429, and every request settles.
import { afterEach, describe, expect, it } from 'vitest';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { SchedulerRejection } from '../../../src/core/scheduler/types';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

let engines: TestEngine[] = [];
let scheduler: Scheduler | undefined;

afterEach(async () => {
  scheduler?.close();
  scheduler = undefined;
  await Promise.all(engines.map((e) => e.close()));
  engines = [];
});

function peakStreams(engine: TestEngine): () => number {
  let peak = 0;
  engine.on('progress', () => (peak = Math.max(peak, engine.activeStreams)));
  return () => peak;
}

describe('scheduler in front of real engines', () => {
  it('keeps each engine within its limit under a burst of 100 and refuses the excess cleanly', async () => {
    const a = await startTestEngine({ mode: { generate: 4, delayMs: 3 } });
    const b = await startTestEngine({ mode: { generate: 4, delayMs: 3 } });
    engines = [a, b];
    const peakA = peakStreams(a);
    const peakB = peakStreams(b);
    scheduler = new Scheduler({ maxConcurrentPerEndpoint: 4, maxQueuePerModel: 32 });
    const s = scheduler;
    s.setModel('m', [
      { url: a.url, health: 'healthy' },
      { url: b.url, health: 'healthy' },
    ]);

    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, async (_, i) => {
        const lease = await s.admit('m', { requestId: `burst-${i}`, source: i % 2 ? 'hub' : 'local' });
        try {
          const res = await fetch(`${lease.endpointUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
          });
          const text = await res.text();
          expect(text).toContain('data: [DONE]');
          return lease.endpointUrl;
        } finally {
          lease.release();
        }
      }),
    );

    const served = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    // At least the 8 slots and the 32 places of the queue are served; a slot freed while the burst is still
    // arriving may take one more (on a loaded machine the burst's calls spread over turns), never beyond the limits.
    expect(served.length).toBeGreaterThanOrEqual(40);
    expect(served.length + refused.length).toBe(100);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((e) => e instanceof SchedulerRejection && e.statusCode === 429 && e.kind === 'rejected')).toBe(true);
    expect(a.requests.length + b.requests.length).toBe(served.length);
    expect(a.requests.length).toBeGreaterThanOrEqual(12);
    expect(b.requests.length).toBeGreaterThanOrEqual(12);
    expect(peakA()).toBeLessThanOrEqual(4);
    expect(peakB()).toBeLessThanOrEqual(4);
    expect(peakA() + peakB()).toBeGreaterThanOrEqual(6);
    expect(s.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 });
  });
});
