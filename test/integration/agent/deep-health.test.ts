// The deep health check in the running Agent: an engine whose model list answers while every completion fails
// (vLLM's EngineDeadError behind a live API server) is taken out of service with its reason, shown per model in
// the console's view, and the hub hears it; once the engine answers a real token again it serves again.
// Real dev hub, real test engine, the real Agent.
import { afterEach, describe, expect, it } from 'vitest';
import { call, freePort, modelOf, registered, startStack, until, type Stack } from '../../support/stack';
import { createGatewayKey } from '../../support/approvals';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('deep health in the agent', () => {
  it('a dead engine behind a live model list is unhealthy (engine_error) per model and at the hub, and comes back', async () => {
    stack = await startStack({
      engines: [{ mode: { status: 500, body: 'Internal Server Error' } }],
      // Per-model health alone: self-healing (its own tests) would withdraw the model, and a withdrawn model's health is not sent.
      agent: { DeepHealthCheckEvery: 1, SelfHealFailures: 0 },
    });
    await registered(stack);
    const engine = stack.engines[0]!;
    const model = engine.modelIds[0]!;
    await until(() => modelOf(stack!.agent, model)?.endpoints[0]?.condition === 'engine_error', 'the model shown with an engine error');
    const ep = modelOf(stack.agent, model)!.endpoints[0]!;
    expect(ep).toMatchObject({ health: 'unhealthy', deepCheck: { ok: false, code: 'engine_error' }, lastError: expect.stringContaining('answered 500') });
    await until(
      () => stack!.hub!.received.some((m) => m.type === 'model_health_update' && (m.payload.model_health as Record<string, string>)[model] === 'unhealthy'),
      'the hub told',
    );
    const probe = engine.requests.find((r) => r.method === 'POST');
    expect(probe?.body).toMatchObject({ model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] });

    await engine.setMode({ generate: 1 });
    await until(() => modelOf(stack!.agent, model)?.endpoints[0]?.health === 'healthy', 'healthy again once a token comes back');
    expect(modelOf(stack.agent, model)!.endpoints[0]).toMatchObject({ deepCheck: { ok: true } });
    expect(modelOf(stack.agent, model)!.endpoints[0]!.condition).toBeUndefined();
  });
});

describe('per-model health in the agent (Go keeps health per model)', () => {
  it('two models on one endpoint, one failing every completion: that one is unhealthy, the other healthy, as the hub hears it', async () => {
    stack = await startStack({
      engines: [
        { models: ['base-chat', 'lora-broken'], modelModes: { 'lora-broken': { status: 500, body: { error: { message: 'adapter failed to load' } } } } },
      ],
      agent: { DeepHealthCheckEvery: 5, SelfHealFailures: 0 },
    });
    await registered(stack);
    const heard = (m: { type: string; payload: Record<string, unknown> }) =>
      m.type === 'model_health_update' || m.type === 'heartbeat' ? (m.payload.model_health as Record<string, string> | undefined) : undefined;
    await until(() => stack!.hub!.received.some((m) => heard(m)?.['lora-broken'] === 'unhealthy'), 'the hub hears the failing model unhealthy');
    const last = [...stack.hub!.received].reverse().find((m) => heard(m)?.['lora-broken'] === 'unhealthy')!;
    expect(heard(last)).toEqual({ 'base-chat': 'healthy', 'lora-broken': 'unhealthy' });
    expect(modelOf(stack.agent, 'lora-broken')).toMatchObject({
      health: 'unhealthy',
      endpoints: [{ condition: 'engine_error', deepCheck: { ok: false, code: 'engine_error' } }],
    });
    expect(modelOf(stack.agent, 'base-chat')).toMatchObject({ health: 'healthy', endpoints: [{ health: 'healthy', deepCheck: { ok: true } }] });
    expect(modelOf(stack.agent, 'base-chat')!.endpoints[0]!.condition).toBeUndefined();

    // The owner's apps are not sent there either: the failing model is refused as an outage (503, unhealthy)
    // without reaching the engine, its neighbour on the same engine answers.
    const { key } = await createGatewayKey(stack.agent, 'app');
    await stack.agent.invoke('settings.save', { patch: { gatewayEnabled: true, gatewayListen: `127.0.0.1:${await freePort()}` } });
    const ask = (model: string) =>
      fetch(`http://${stack!.agent.snapshot().gateway.listen}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
    const posts = () =>
      stack!.engines[0]!.requests.filter(
        (r) =>
          r.method === 'POST' && (r.body as { model?: string } | undefined)?.model === 'lora-broken' && (r.body as { max_tokens?: number }).max_tokens !== 1,
      ).length;
    const refused = await ask('lora-broken');
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ error: { code: 'rejected' } });
    expect(posts()).toBe(0);
    expect((await ask('base-chat')).status).toBe(200);

    // Fixed: the model is asked again at every check until it passes, and the hub hears it healthy.
    stack.engines[0]!.setModelMode('lora-broken', undefined);
    await until(() => modelOf(stack!.agent, 'lora-broken')?.health === 'healthy', 'the fixed model healthy again');
    await until(() => stack!.hub!.received.some((m) => m.type === 'model_health_update' && heard(m)?.['lora-broken'] === 'healthy'), 'the hub hears it back');
  });

  it('a warmup whose reply does not stop leaves the model degraded (not "healthy") until a warmup passes', async () => {
    stack = await startStack({ engines: [{ models: ['chatty'], mode: { generate: 200 } }] });
    await registered(stack);
    const bad = await call(stack.agent, 'models.warmup', { model: 'chatty' });
    expect(bad).toMatchObject({ success: false, code: 'budget_exhausted' });
    expect(modelOf(stack.agent, 'chatty')).toMatchObject({ health: 'degraded', warmupFailure: { code: 'budget_exhausted' } });
    await until(
      () => stack!.hub!.received.some((m) => m.type === 'model_health_update' && (m.payload.model_health as Record<string, string>).chatty === 'degraded'),
      'the hub hears it degraded',
    );

    await stack.engines[0]!.setMode({ generate: 3 });
    expect(await call(stack.agent, 'models.warmup', { model: 'chatty' })).toMatchObject({ success: true });
    expect(modelOf(stack.agent, 'chatty')).toMatchObject({ health: 'healthy' });
    expect(modelOf(stack.agent, 'chatty')!.warmupFailure).toBeUndefined();
  });
});
