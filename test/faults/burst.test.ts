// Fault: a burst of requests far beyond capacity (4 running + 32 queued per model by default).
// Every request must be answered exactly once, served or refused (429), none lost, and the agent
// must be idle and clean afterwards.
import { afterEach, describe, expect, it } from 'vitest';
import { registered, startStack, until, type Stack } from '../support/stack';
import { generatedText } from '../support/traces';
import { report, rng, scale, streamChat } from '../support/faults/faults';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const FINAL = new Set(['stream_end', 'ack', 'error']);

describe('burst beyond capacity', () => {
  it('500 inference messages straight over the provider socket: each answered once, served or 429', async () => {
    const r = rng(0x5eed05);
    const total = scale(500, 2000);
    stack = await startStack({ engines: [{ mode: { generate: 40, delayMs: 1 } }] });
    await registered(stack);
    const { hub, agent } = { hub: stack.hub!, agent: stack.agent };
    const model = stack.engines[0]!.modelIds[0]!;
    const nodeId = hub.providers()[0]!.nodeId;
    const finals = new Map<string, number>();
    hub.events.on('message', (m: { type: string; payload: Record<string, unknown> }) => {
      if (!FINAL.has(m.type) || typeof m.payload.request_id !== 'string') return;
      finals.set(m.payload.request_id, (finals.get(m.payload.request_id) ?? 0) + 1);
    });
    const calls = Array.from({ length: total }, (_, i) => {
      const stream = r.chance(0.7);
      const n = r.int(1, 40);
      return hub
        .call(
          nodeId,
          'inference',
          { model_id: model, stream, request: { model, max_tokens: n, messages: [{ role: 'user', content: `burst ${i}` }] } },
          stream ? 'stream_end' : 'ack',
          60_000,
        )
        .then((reply) => ({ reply, stream, n }))
        .catch((e: Error) => ({ reply: { _type: 'lost', message: e.message } as Record<string, unknown>, stream, n }));
    });
    const results = await Promise.all(calls);
    let served = 0;
    let rejected = 0;
    let lost = 0;
    const other: unknown[] = [];
    for (const { reply, stream } of results) {
      // Refused on the request's own result path (stream_end / ack with the status), never an error frame.
      const code = Number(reply.status_code);
      if (reply._type === (stream ? 'stream_end' : 'ack') && (code === 429 || code === 503) && String(reply.error ?? '') !== '') rejected++;
      else if (reply._type === (stream ? 'stream_end' : 'ack') && reply.error === undefined && (stream || reply.status_code === 200)) served++;
      else if (reply._type === 'lost') lost++;
      else other.push(reply);
    }
    // Barrier before counting duplicates: the agent is idle and one more request came back.
    await until(() => agent.hubStatus().relay.activeCount === 0 && agent.snapshot().models.every((m) => m.inFlight === 0), 'agent idle', 20_000);
    const probe = await streamChat(hub, model, 5);
    const duplicated = [...finals.values()].reduce((s, c) => s + (c > 1 ? c - 1 : 0), 0);
    report('burst-socket', { injected: total, recovered: served + rejected, lost: lost + other.length, duplicated }, { served, rejected });
    expect(other).toEqual([]);
    expect(lost).toBe(0);
    expect(duplicated).toBe(0);
    expect(served + rejected).toBe(total);
    expect(served).toBeGreaterThanOrEqual(36); // at least every slot and queue place was used
    expect(rejected).toBeGreaterThan(0); // the burst really was beyond capacity
    expect(probe.text).toBe(generatedText(5));
    expect(agent.snapshot().models.every((m) => m.queued === 0 && m.inFlight === 0)).toBe(true);
  });

  it('a burst over HTTP through the hub: every client gets its answer or a 429, none hangs', async () => {
    const total = scale(150, 600);
    stack = await startStack({ engines: [{ mode: { generate: 30, delayMs: 1 } }] });
    await registered(stack);
    const hub = stack.hub!;
    const model = stack.engines[0]!.modelIds[0]!;
    const outcomes = await Promise.all(Array.from({ length: total }, (_, i) => streamChat(hub, model, 10 + (i % 20))));
    let served = 0;
    let rejected = 0;
    const bad: unknown[] = [];
    outcomes.forEach((o, i) => {
      if (!o.error && o.text === generatedText(10 + (i % 20)) && o.sawDone) served++;
      else if (o.status === 429 && o.error) rejected++;
      else bad.push(o);
    });
    report('burst-http', { injected: total, recovered: served + rejected, lost: bad.length, duplicated: 0 }, { served, rejected });
    expect(bad).toEqual([]);
    expect(rejected).toBeGreaterThan(0);
    expect(served).toBeGreaterThanOrEqual(36);
  });
});
