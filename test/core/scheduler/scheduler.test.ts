import { afterEach, describe, expect, it } from 'vitest';
import { PAUSED_MESSAGE, Scheduler } from '../../../src/core/scheduler/scheduler';
import { SchedulerRejection, type Lease, type SchedulerEndpoint } from '../../../src/core/scheduler/types';
import type { RequestSource } from '../../../src/shared/types';

const A = 'http://127.0.0.1:8000';
const B = 'http://127.0.0.1:30000';

const healthy = (url: string, maxConcurrent?: number): SchedulerEndpoint => ({ url, health: 'healthy', ...(maxConcurrent ? { maxConcurrent } : {}) });

let schedulers: Scheduler[] = [];
/** The queue's rules alone: admissions not paced (the pacing has its own test below). */
function make(limits: ConstructorParameters<typeof Scheduler>[0] = {}): Scheduler {
  const s = new Scheduler(limits, undefined, { pace: false });
  schedulers.push(s);
  return s;
}

afterEach(() => {
  for (const s of schedulers) s.close();
  schedulers = [];
});

let n = 0;
function admit(s: Scheduler, model: string, source: RequestSource = 'local', signal?: AbortSignal) {
  const requestId = `r${++n}`;
  const positions: number[] = [];
  const promise = s.admit(model, { requestId, source, signal, onAccepted: (p) => positions.push(p) });
  return { requestId, positions, promise };
}

async function rejection(p: Promise<unknown>): Promise<SchedulerRejection> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SchedulerRejection) return e;
    throw e;
  }
  throw new Error('expected a SchedulerRejection, the request was admitted');
}

describe('Scheduler admission', () => {
  it('handles a burst of 100: 8 run, 32 queue with positions 1..32, 60 are refused, every promise settles', async () => {
    const s = make({ maxConcurrentPerEndpoint: 4, maxQueuePerModel: 32 });
    s.setModel('m', [healthy(A), healthy(B)]);
    const perEndpointPeak = new Map<string, number>();
    let peak = 0;
    const order: string[] = [];

    const reqs = Array.from({ length: 100 }, () => admit(s, 'm'));
    const runs = reqs.map(async (r) => {
      const lease = await r.promise;
      order.push(r.requestId);
      const st = s.stats()[0]!;
      peak = Math.max(peak, st.inFlight);
      for (const ep of st.endpoints) perEndpointPeak.set(ep.url, Math.max(perEndpointPeak.get(ep.url) ?? 0, ep.inFlight));
      await new Promise((r) => setImmediate(r));
      lease.release();
    });

    // Right after the burst, before anything finished:
    const st = s.stats()[0]!;
    expect(st).toMatchObject({ inFlight: 8, queued: 32, maxConcurrent: 8, maxQueue: 32 });

    const settled = await Promise.allSettled(runs);
    const ok = settled.filter((x) => x.status === 'fulfilled').length;
    const refused = settled.flatMap((x) => (x.status === 'rejected' ? [x.reason as unknown] : []));
    expect(ok).toBe(40);
    expect(refused).toHaveLength(60);
    for (const e of refused) {
      expect(e).toBeInstanceOf(SchedulerRejection);
      expect((e as SchedulerRejection).kind).toBe('rejected');
      expect((e as SchedulerRejection).statusCode).toBe(429);
      expect((e as SchedulerRejection).retryAfterMs).toBeGreaterThan(0);
    }

    // onAccepted exactly once for the 40 admitted, never for the refused; positions 0 (x8) then 1..32.
    const positions = reqs.map((r) => r.positions);
    expect(positions.slice(0, 8)).toEqual(Array.from({ length: 8 }, () => [0]));
    expect(positions.slice(8, 40)).toEqual(Array.from({ length: 32 }, (_, i) => [i + 1]));
    expect(positions.slice(40).every((p) => p.length === 0)).toBe(true);

    // FIFO: they ran in the order they arrived; never more than the limits at once.
    expect(order).toEqual(reqs.slice(0, 40).map((r) => r.requestId));
    expect(peak).toBe(8);
    expect(perEndpointPeak.get(A)).toBe(4);
    expect(perEndpointPeak.get(B)).toBe(4);
    expect(s.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('spreads requests by fewest outstanding, least recently used on ties', async () => {
    const s = make();
    s.setModel('m', [healthy(A), healthy(B)]);
    const leases: Lease[] = [];
    for (let i = 0; i < 6; i++) leases.push(await admit(s, 'm').promise);
    expect(leases.filter((l) => l.endpointUrl === A)).toHaveLength(3);
    expect(leases.filter((l) => l.endpointUrl === B)).toHaveLength(3);

    // Free two slots on A: the next two go to A (fewer outstanding), not alternating.
    for (const l of leases.filter((l) => l.endpointUrl === A).slice(0, 2)) l.release();
    const next = [await admit(s, 'm').promise, await admit(s, 'm').promise];
    expect(next.map((l) => l.endpointUrl)).toEqual([A, A]);
    for (const l of [...leases, ...next]) l.release();

    // One at a time: alternates between the two.
    const seq: string[] = [];
    for (let i = 0; i < 4; i++) {
      const l = await admit(s, 'm').promise;
      seq.push(l.endpointUrl);
      l.release();
    }
    expect(new Set([seq[0], seq[1]])).toEqual(new Set([A, B]));
    expect(seq[2]).toBe(seq[0]);
    expect(seq[3]).toBe(seq[1]);
  });

  it('prefers healthy endpoints and uses a degraded one only when the healthy one is full', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('m', [{ url: A, health: 'degraded' }, healthy(B)]);
    const leases = [await admit(s, 'm').promise, await admit(s, 'm').promise, await admit(s, 'm').promise];
    expect(leases.map((l) => l.endpointUrl)).toEqual([B, B, A]);
    for (const l of leases) l.release();
  });

  it('skips an unhealthy endpoint and queues instead of using it', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('m', [healthy(A), healthy(B)]);
    s.setEndpointHealth(B, 'unhealthy');
    const l1 = await admit(s, 'm').promise;
    const l2 = await admit(s, 'm').promise;
    expect([l1.endpointUrl, l2.endpointUrl]).toEqual([A, A]);
    const third = admit(s, 'm');
    expect(third.positions).toEqual([1]);
    expect(s.stats()[0]).toMatchObject({ maxConcurrent: 2, queued: 1 });

    // B comes back: the queued request runs there at once.
    s.setEndpointHealth(B, 'healthy');
    expect((await third.promise).endpointUrl).toBe(B);

    // Also with an explicit model limit above what the healthy endpoint can take.
    const t = make({ maxConcurrentPerEndpoint: 1 });
    t.setModel('m', [healthy(A), { url: B, health: 'unhealthy' }], { maxConcurrent: 4 });
    const only = await admit(t, 'm').promise;
    expect(only.endpointUrl).toBe(A);
    const waiting = admit(t, 'm');
    expect(waiting.positions).toEqual([1]);
    expect(t.stats()[0]!.endpoints[1]).toMatchObject({ url: B, inFlight: 0, health: 'unhealthy' });
    // Shutting down refuses what still waits.
    t.close();
    expect(await rejection(waiting.promise)).toMatchObject({ kind: 'cancelled', statusCode: 499 });
  });

  it('a model failing on an endpoint (its own health there) gets no new requests there; its neighbours on that endpoint do', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('base', [healthy(A)]);
    s.setModel('lora', [healthy(A), { url: B, health: 'healthy', modelHealth: 'unhealthy' }]);
    // B is healthy as an engine, but not for lora: lora goes to A only.
    const l1 = await admit(s, 'lora').promise;
    const l2 = await admit(s, 'lora').promise;
    expect([l1.endpointUrl, l2.endpointUrl]).toEqual([A, A]);
    expect(s.stats().find((m) => m.model === 'lora')).toMatchObject({
      maxConcurrent: 2,
      endpoints: [
        { url: A, health: 'healthy' },
        { url: B, health: 'unhealthy' },
      ],
    });
    const waiting = admit(s, 'lora');
    expect(waiting.positions).toEqual([1]);
    l1.release();
    const l3 = await waiting.promise;
    expect(l3.endpointUrl).toBe(A);
    l2.release();
    l3.release();

    // Failing on its only endpoint: lora is refused as an outage (503), base on the same endpoint still runs.
    s.setModel('lora', [{ url: A, health: 'healthy', modelHealth: 'unhealthy' }]);
    expect(await rejection(admit(s, 'lora').promise)).toMatchObject({ kind: 'rejected', statusCode: 503, reason: 'unhealthy' });
    const b = await admit(s, 'base').promise;
    expect(b.endpointUrl).toBe(A);
    b.release();
    // Its health back there: it runs again.
    s.setModel('lora', [{ url: A, health: 'healthy', modelHealth: 'healthy' }]);
    expect((await admit(s, 'lora').promise).endpointUrl).toBe(A);
  });

  it('answers 404 model_not_loaded for an unknown model, and 503 (an outage, never 404) when every endpoint is unhealthy', async () => {
    const s = make({ maxConcurrentPerEndpoint: 1 });
    const unknown = await rejection(admit(s, 'nope').promise);
    expect(unknown).toMatchObject({ kind: 'model_not_loaded', statusCode: 404, reason: 'unknown_model' });
    // The message says where to find the models that are served.
    expect(unknown.message).toContain('GET /v1/models');

    s.setModel('m', [healthy(A), healthy(B)]);
    const held = [await admit(s, 'm').promise, await admit(s, 'm').promise];
    const queued = admit(s, 'm');
    s.setEndpointHealth(A, 'unhealthy');
    s.setEndpointHealth(B, 'unhealthy');
    // The waiting request is told at once, and so is a new one.
    const e1 = await rejection(queued.promise);
    const e2 = await rejection(admit(s, 'm').promise);
    for (const e of [e1, e2]) {
      expect(e).toMatchObject({ kind: 'rejected', statusCode: 503, reason: 'unhealthy' });
      expect(e.retryAfterMs).toBeGreaterThan(0);
    }
    for (const l of held) l.release();
    expect(s.stats()[0]).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it('removes a queued request when its signal aborts, and gives the slot to the next one', async () => {
    const s = make({ maxConcurrentPerEndpoint: 1 });
    s.setModel('m', [healthy(A)]);
    const held = await admit(s, 'm').promise;
    const ac = new AbortController();
    const cancelled = admit(s, 'm', 'local', ac.signal);
    const after = admit(s, 'm');
    expect(cancelled.positions).toEqual([1]);
    expect(after.positions).toEqual([2]);
    ac.abort();
    expect(await rejection(cancelled.promise)).toMatchObject({ kind: 'cancelled', statusCode: 499, reason: 'cancelled' });
    expect(s.stats()[0]!.queued).toBe(1);
    held.release();
    const l = await after.promise;
    expect(s.stats()[0]).toMatchObject({ inFlight: 1, queued: 0 });
    l.release();

    // Already aborted before admit: refused without queuing.
    const pre = new AbortController();
    pre.abort();
    expect(await rejection(admit(s, 'm', 'hub', pre.signal).promise)).toMatchObject({ kind: 'cancelled', statusCode: 499 });
  });

  it('refuses a request that waited longer than the queue timeout with 429', async () => {
    const s = make({ maxConcurrentPerEndpoint: 1, queueTimeoutMs: 40 });
    s.setModel('m', [healthy(A)]);
    const held = await admit(s, 'm').promise;
    const started = Date.now();
    const e = await rejection(admit(s, 'm').promise);
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect(e).toMatchObject({ kind: 'rejected', statusCode: 429, reason: 'queue_timeout' });
    expect(e.retryAfterMs).toBeGreaterThan(0);
    expect(s.stats()[0]!.queued).toBe(0);
    held.release();
    expect(s.stats()[0]!.inFlight).toBe(0);
  });

  it('alternates between hub and local waiters so neither starves', async () => {
    const s = make({ maxConcurrentPerEndpoint: 1, maxQueuePerModel: 20 });
    s.setModel('m', [healthy(A)]);
    const current = await admit(s, 'm', 'hub').promise;
    const hub = Array.from({ length: 5 }, () => admit(s, 'm', 'hub'));
    const local = Array.from({ length: 3 }, () => admit(s, 'm', 'local'));
    // Positions predict the alternation: local requests slot in between the hub ones.
    expect(hub.map((r) => r.positions[0])).toEqual([1, 2, 3, 4, 5]);
    expect(local.map((r) => r.positions[0])).toEqual([2, 4, 6]);

    const granted: Array<{ source: RequestSource; lease: Lease }> = [];
    let wake: (() => void) | undefined;
    for (const [source, reqs] of [
      ['hub', hub],
      ['local', local],
    ] as const) {
      for (const r of reqs) {
        void r.promise.then((lease) => {
          granted.push({ source, lease });
          wake?.();
        });
      }
    }
    const nextGrant = async (i: number) => {
      while (granted.length <= i) await new Promise<void>((r) => (wake = r));
      return granted[i]!;
    };
    current.release();
    for (let i = 0; i < 8; i++) {
      const g = await nextGrant(i);
      expect(s.stats()[0]!.inFlight).toBe(1);
      g.lease.release();
    }
    const served = granted.map((g) => g.source);
    expect(served).toEqual(['hub', 'local', 'hub', 'local', 'hub', 'local', 'hub', 'hub']);
  });

  it('shares an endpoint limit between the models it serves', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('x', [healthy(A)]);
    s.setModel('y', [healthy(A)]);
    const lx = await admit(s, 'x').promise;
    const ly = await admit(s, 'y').promise;
    const waiting = admit(s, 'y');
    expect(waiting.positions).toEqual([1]);
    lx.release();
    expect((await waiting.promise).endpointUrl).toBe(A);
    ly.release();
  });

  it('applies a per-model concurrency limit and per-endpoint overrides', async () => {
    const s = make();
    s.setModel('m', [healthy(A, 1), healthy(B, 1)], { maxConcurrent: 1, maxQueue: 1 });
    expect(s.stats()[0]).toMatchObject({
      maxConcurrent: 1,
      maxQueue: 1,
      endpoints: [
        { url: A, maxConcurrent: 1 },
        { url: B, maxConcurrent: 1 },
      ],
    });
    const l = await admit(s, 'm').promise;
    const q = admit(s, 'm');
    expect(q.positions).toEqual([1]);
    expect(await rejection(admit(s, 'm').promise)).toMatchObject({ kind: 'rejected', statusCode: 429, reason: 'queue_full' });
    l.release();
    (await q.promise).release();
  });

  it('release is idempotent and a withdrawn model lets running requests finish', async () => {
    const s = make({ maxConcurrentPerEndpoint: 1 });
    s.setModel('m', [healthy(A)]);
    const l = await admit(s, 'm').promise;
    const q = admit(s, 'm');
    s.removeModel('m');
    expect(await rejection(q.promise)).toMatchObject({ kind: 'rejected', statusCode: 503, reason: 'withdrawn' });
    expect(s.stats()).toEqual([]);
    expect(s.inFlight()).toBe(1);
    l.release();
    l.release();
    expect(s.inFlight()).toBe(0);
    expect(await rejection(admit(s, 'm').promise)).toMatchObject({ statusCode: 404 });
  });

  it('emits change with stats, once per burst', async () => {
    const s = make();
    s.setModel('m', [healthy(A)]);
    const events: unknown[] = [];
    s.on('change', (st) => events.push(st));
    const leases = await Promise.all([admit(s, 'm').promise, admit(s, 'm').promise, admit(s, 'm').promise]);
    await Promise.resolve();
    expect(events).toHaveLength(1);
    expect(events[0]).toEqual([
      { model: 'm', inFlight: 3, queued: 0, maxConcurrent: 4, maxQueue: 32, endpoints: [{ url: A, inFlight: 3, maxConcurrent: 4, health: 'healthy' }] },
    ]);
    for (const l of leases) l.release();
  });

  it('rejects invalid limits with a clear error', () => {
    expect(() => new Scheduler({ maxConcurrentPerEndpoint: 0 })).toThrow(
      expect.objectContaining({ code: 'invalid_limits', field: 'maxConcurrentPerEndpoint' }),
    );
    const s = make();
    expect(() => s.setModel('m', [{ url: '', health: 'healthy' }])).toThrow(expect.objectContaining({ code: 'invalid_endpoints', field: '0.url' }));
    expect(() => s.setModel('m', [healthy(A)], { maxQueue: -1 })).toThrow(expect.objectContaining({ code: 'invalid_limits', field: 'maxQueue' }));
  });
});

describe('Scheduler pause', () => {
  it('lets running requests finish, refuses queued and new ones, drains, and resumes', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('m', [healthy(A)]);
    const running = [await admit(s, 'm').promise, await admit(s, 'm').promise];
    const queued = admit(s, 'm', 'hub');
    s.pause();
    expect(s.isPaused()).toBe(true);
    const q = await rejection(queued.promise);
    expect(q).toMatchObject({ kind: 'rejected', statusCode: 429, reason: 'paused', message: PAUSED_MESSAGE });
    const fresh = await rejection(admit(s, 'm').promise);
    expect(fresh).toMatchObject({ kind: 'rejected', statusCode: 429, reason: 'paused', message: PAUSED_MESSAGE });
    expect(fresh.retryAfterMs).toBeGreaterThan(0);

    let drained = false;
    const d = s.drained().then(() => (drained = true));
    running[0]!.release();
    await Promise.resolve();
    expect(drained).toBe(false);
    expect(s.inFlight()).toBe(1);
    running[1]!.release();
    await d;
    expect(drained).toBe(true);

    s.resume();
    const after = admit(s, 'm');
    expect(after.positions).toEqual([0]);
    (await after.promise).release();
    await s.drained();
  });
});

describe('Scheduler pacing (one admission per event-loop turn)', () => {
  it('a burst in one tick: the first goes at once, the rest one per later turn; a cancel read in the same tick stops one before its turn', async () => {
    const s = new Scheduler({ maxConcurrentPerEndpoint: 8 });
    schedulers.push(s);
    s.setModel('m', [healthy(A)]);
    const ac = new AbortController();
    const turnsOf: number[] = [];
    let turn = 0;
    const ticking = setInterval(() => undefined, 1); // keeps the loop turning while setImmediate counts turns
    const count = (): void => {
      turn++;
      if (turn < 20) setImmediate(count);
    };
    setImmediate(count);
    const reqs = [admit(s, 'm'), admit(s, 'm', 'local', ac.signal), admit(s, 'm'), admit(s, 'm')];
    ac.abort(); // read in the same tick as the burst
    const settled = await Promise.allSettled(reqs.map((r) => r.promise.then((l) => (turnsOf.push(turn), l))));
    clearInterval(ticking);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({ kind: 'cancelled', statusCode: 499 });
    // The first in the tick of the burst, the others each in a turn of its own, in order.
    expect(turnsOf[0]).toBe(0);
    expect(new Set(turnsOf).size).toBe(3);
    expect([...turnsOf].sort((a, b) => a - b)).toEqual(turnsOf);
    for (const r of settled) if (r.status === 'fulfilled') r.value.release();
  });

  it('closing refuses the admissions still waiting for their turn (499, shutting down)', async () => {
    const s = new Scheduler({ maxConcurrentPerEndpoint: 8 });
    schedulers.push(s);
    s.setModel('m', [healthy(A)]);
    const first = admit(s, 'm');
    const second = admit(s, 'm');
    s.close();
    (await first.promise).release();
    expect(await rejection(second.promise)).toMatchObject({ kind: 'cancelled', statusCode: 499, reason: 'shutting_down' });
  });
});

describe('Scheduler admitOn (a slot on one endpoint, for a probe)', () => {
  it('takes a slot now or not at all, whatever the health or a pause; it counts against the endpoint', async () => {
    const s = make({ maxConcurrentPerEndpoint: 2 });
    s.setModel('m', [{ url: A, health: 'unhealthy' }, healthy(B)]);
    s.pause();
    const probe = s.admitOn(A);
    expect(probe?.endpointUrl).toBe(A);
    expect(s.stats()[0]!.endpoints.find((e) => e.url === A)!.inFlight).toBe(1);
    s.resume();
    s.setEndpointHealth(A, 'healthy');
    const two = admit(s, 'm');
    const three = admit(s, 'm');
    const leases = [await two.promise, await three.promise];
    // B is free and A has one slot left: a third request runs; a probe of B then finds B full.
    expect(leases.map((l) => l.endpointUrl).sort()).toEqual([A, B].sort());
    const four = await admit(s, 'm').promise;
    expect(four.endpointUrl).toBe(B);
    expect(s.admitOn(B)).toBeUndefined();
    probe!.release();
    probe!.release();
    expect(s.stats()[0]!.endpoints.find((e) => e.url === A)!.inFlight).toBe(1);
    // An endpoint no model uses has nothing to share.
    expect(s.admitOn('http://127.0.0.1:1')?.endpointUrl).toBe('http://127.0.0.1:1');
    for (const l of [...leases, four]) l.release();
  });
});
