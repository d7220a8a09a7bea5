// Fault: an engine that accepts a request and never answers it (a hung generation, or a frozen process the
// kernel still accepts connections for). Every call is bounded by the [Agent] Engine*TimeoutSeconds
// settings, streaming or not, and the first call that passes the headers deadline makes the endpoint
// suspect at once: no new request is routed there until a check gets an answer and a token from it.
import { afterEach, describe, expect, it } from 'vitest';
import type { DevHub } from '../../src/cli/dev-hub';
import type { RecordedRequest } from '../support/engine-server';
import { chat, modelOf, registered, startStack, until, type Stack } from '../support/stack';
import { report, streamChat } from '../support/faults/faults';
import { generatedText } from '../support/traces';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** A non-stream chat through the hub: its status, its error code and how long it took. */
async function once(hub: DevHub, model: string): Promise<{ status: number; code?: string | number; ms: number }> {
  const t0 = performance.now();
  const res = await chat(hub, { model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
  const body = (await res.json()) as { error?: { code?: string | number } };
  return { status: res.status, ...(body.error?.code !== undefined ? { code: body.error.code } : {}), ms: performance.now() - t0 };
}

/** Client requests the engine got (the deep check's one-token "ping" chats left out). */
function clientCalls(requests: RecordedRequest[]): number {
  return requests.filter((q) => q.method === 'POST' && (q.body as { max_tokens?: number } | undefined)?.max_tokens !== 1).length;
}

function endpointOf(s: Stack, model: string) {
  return modelOf(s.agent, model)?.endpoints[0];
}

describe('engine bounds', () => {
  it('an engine that accepts and never answers a non-streaming request: the endpoint is suspect at the headers deadline, the call ends at the total bound', async () => {
    stack = await startStack({
      engines: [{ mode: 'hang' }],
      agent: { EngineHeadersTimeoutSeconds: 1, EngineTotalTimeoutSeconds: 4, MaxConcurrentPerEndpoint: 2 },
    });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const t0 = performance.now();
    // Both slots taken by calls that never get an answer.
    const hung = [once(stack.hub!, model), once(stack.hub!, model)];
    await until(() => clientCalls(engine.requests) === 2, 'both calls at the engine');
    // Passing the headers deadline marks the endpoint at once (not after 3 failed rounds, not after a free slot).
    await until(() => endpointOf(stack!, model)?.condition === 'no_response', 'the endpoint marked no_response', 10_000);
    const suspectAfterMs = performance.now() - t0;
    expect(endpointOf(stack, model)).toMatchObject({ health: 'unhealthy', condition: 'no_response' });
    // No new request is routed to it meanwhile: refused at once, never sent to the engine.
    const third = await once(stack.hub!, model);
    expect(third.status).toBeGreaterThanOrEqual(400);
    expect(third.ms).toBeLessThan(2000);
    expect(clientCalls(engine.requests)).toBe(2);
    // The hung calls end with 504 at the total bound, not after the old 300 s.
    const ended = await Promise.all(hung);
    const endedAfterMs = performance.now() - t0;
    expect(ended.map((r) => r.status)).toEqual([504, 504]);
    expect(endedAfterMs).toBeLessThan(15_000);
    report(
      'engine-hang-non-stream',
      { injected: 2, recovered: 2, lost: 0, duplicated: 0 },
      { suspectAfterMs: Math.round(suspectAfterMs), endedAfterMs: Math.round(endedAfterMs) },
    );
    // It answers again: a check (its one-token chat runs even with every slot taken) brings it back.
    await engine.setMode({ generate: 1000 });
    await until(() => endpointOf(stack!, model)?.health === 'healthy', 'healthy again', 15_000);
    const after = await streamChat(stack.hub!, model, 12);
    expect(after.text).toBe(generatedText(12));
  }, 60_000);

  it('a stream that passes the headers deadline: 504, and the endpoint is suspect at once although the engine lists its models', async () => {
    stack = await startStack({ engines: [{ mode: 'hang' }], agent: { EngineHeadersTimeoutSeconds: 0.5 } });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    const o = await streamChat(stack.hub!, model, 10);
    expect(o.status).toBe(504);
    // The health rounds (every 0.1 s here) see GET /v1/models answer: only the request's finding marks it.
    expect(endpointOf(stack, model)).toMatchObject({ health: 'unhealthy', condition: 'no_response' });
    const calls = clientCalls(engine.requests);
    const next = await streamChat(stack.hub!, model, 10);
    expect(next.status).toBeGreaterThanOrEqual(400);
    expect(next.status).not.toBe(504);
    expect(clientCalls(engine.requests)).toBe(calls);
    await engine.setMode({ generate: 1000 });
    await until(() => endpointOf(stack!, model)?.health === 'healthy', 'healthy again', 15_000);
    expect((await streamChat(stack.hub!, model, 12)).text).toBe(generatedText(12));
  }, 60_000);
});
