// What runs is always the model the owner enabled: a hub `inference` for an enabled model_id whose
// request.model names another model (one the owner switched off, or never listed) runs the enabled
// entry's local_model ?? model_id — the engine never sees the hub's request.model.
import { afterEach, describe, expect, it } from 'vitest';
import { registered, startStack, until, type Stack } from '../../support/stack';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

function inference(id: string, modelId: string, requestModel: string): string {
  return JSON.stringify({
    type: 'inference',
    request_id: id,
    payload: {
      endpoint_id: 'e1',
      model_id: modelId,
      stream: false,
      request: { model: requestModel, messages: [{ role: 'user', content: 'hi' }], stream: false },
    },
  });
}

describe('hub inference runs the enabled model', () => {
  it('without local_model: the engine is asked for model_id, not request.model', async () => {
    stack = await startStack({ engines: [{ models: ['good', 'switched-off'] }], models: { good: { engine: 0 } } });
    await registered(stack);
    const engine = stack.engines[0]!;
    stack.hub!.broadcastRaw(inference('r-off', 'good', 'switched-off'));
    await until(() => engine.requests.some((r) => r.method === 'POST'), 'the engine was asked');
    expect(engine.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { model: string }).model)).toEqual(['good']);
    await until(() => stack!.agent.hubStatus().relay.activeCount === 0, 'request finished');
  });

  it('with local_model: the engine is asked for local_model whatever request.model says', async () => {
    stack = await startStack({ engines: [{ models: ['good-local', 'switched-off'] }], models: { good: { engine: 0, local_model: 'good-local' } } });
    await registered(stack);
    const engine = stack.engines[0]!;
    stack.hub!.broadcastRaw(inference('r-local', 'good', 'switched-off'));
    await until(() => engine.requests.some((r) => r.method === 'POST'), 'the engine was asked');
    expect(engine.requests.filter((r) => r.method === 'POST').map((r) => (r.body as { model: string }).model)).toEqual(['good-local']);
  });
});
