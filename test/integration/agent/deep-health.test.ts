// The deep health check in the running Agent: an engine whose model list answers while every completion fails
// (vLLM's EngineDeadError behind a live API server) is taken out of service with its reason, shown per model in
// the console's view, and the hub hears it; once the engine answers a real token again it serves again.
// Real dev hub, real test engine, the real Agent.
import { afterEach, describe, expect, it } from 'vitest';
import { modelOf, registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('deep health in the agent', () => {
  it('a dead engine behind a live model list is unhealthy (engine_error) per model and at the hub, and comes back', async () => {
    stack = await startStack({
      engines: [{ mode: { status: 500, body: 'Internal Server Error' } }],
      agent: { DeepHealthCheckEvery: 1 },
    });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    await until(() => modelOf(stack!.agent, model)?.endpoints[0]?.condition === 'engine_error', 'the model shown with an engine error');
    const ep = modelOf(stack.agent, model)!.endpoints[0]!;
    expect(ep).toMatchObject({ health: 'unhealthy', deepCheck: { ok: false, code: 'engine_error' }, lastError: expect.stringContaining('answered 500') });
    await until(() => stack!.hub!.received.some((m) => m.type === 'model_health_update' && (m.payload.model_health as Record<string, string>)[model] === 'unhealthy'), 'the hub told');
    const probe = engine.requests.find((r) => r.method === 'POST');
    expect(probe?.body).toMatchObject({ model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });

    await engine.setMode({ generate: 1 });
    await until(() => modelOf(stack!.agent, model)?.endpoints[0]?.health === 'healthy', 'healthy again once a token comes back');
    expect(modelOf(stack.agent, model)!.endpoints[0]).toMatchObject({ deepCheck: { ok: true } });
    expect(modelOf(stack.agent, model)!.endpoints[0]!.condition).toBeUndefined();
  });
});
