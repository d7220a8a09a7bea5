// Two engines found by discovery, only enabled models registered, a toggle
// re-registers, a model served by both is balanced, a burst beyond capacity is rejected cleanly, and
// pause/resume never drops an in-flight request.
import { afterEach, describe, expect, it } from 'vitest';
import { generatedText } from '../../support/traces';
import { chat, chunkText, readSse, registered, startStack, until, type Stack } from '../../support/stack';
import type { ModelState } from '../../../src/shared/types';

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Two engines (vLLM-like and Ollama-like) that both serve "shared/model", found by discovery only. */
async function twoEngineStack(extra: Record<string, number | boolean> = {}, mode?: { generate: number; delayMs: number }): Promise<Stack> {
  const s = await startStack({
    engines: [
      { engineType: 'vllm', models: ['shared/model', 'vllm-only'], ...(mode ? { mode } : {}) },
      { engineType: 'ollama', models: ['shared/model', 'llama3.2:1b'], ...(mode ? { mode } : {}) },
    ],
    models: {},
    start: false,
    agent: { Discovery: true, ...extra },
  });
  return s;
}

async function withEngineHosts(s: Stack): Promise<void> {
  // Discovery probes the owner's hosts; the test engines stand in for engines on default-like ports.
  await s.agent.invoke('engines.addEndpoint', { url: s.engines[0]!.url });
  await s.agent.invoke('engines.addEndpoint', { url: s.engines[1]!.url });
}

describe('engines, toggles, balancing, capacity, pause', () => {
  it('finds both engines, registers only enabled models, and re-registers on a toggle', async () => {
    stack = await twoEngineStack();
    await stack.agent.start();
    await withEngineHosts(stack);
    const snap = stack.agent.snapshot();
    const found = snap.engines.filter((e) => e.reachable).map((e) => [e.type, e.models.slice().sort()]);
    expect(found).toEqual(
      expect.arrayContaining([
        ['vllm', ['shared/model', 'vllm-only']],
        ['ollama', ['llama3.2:1b', 'shared/model']],
      ]),
    );
    // discovered models are off until the owner enables them
    await registered(stack);
    expect(stack.hub!.providers()[0]!.models).toEqual([]);
    const models = (await stack.agent.invoke('models.setEnabled', { model: 'shared/model', enabled: true })) as ModelState[];
    expect(
      models
        .find((m) => m.id === 'shared/model')!
        .endpoints.map((e) => e.engineType)
        .sort(),
    ).toEqual(['ollama', 'vllm']);
    await until(() => stack!.hub!.providers()[0]!.models.includes('shared/model'), 'register with the enabled model');
    const registers = stack.hub!.providers()[0]!.registers;
    expect(registers).toBeGreaterThanOrEqual(2);
    await stack.agent.invoke('models.setEnabled', { model: 'shared/model', enabled: false });
    await until(() => stack!.hub!.providers()[0]!.registers > registers && stack!.hub!.providers()[0]!.models.length === 0, 'register without it');
    // the choice is persisted in the home folder
    expect(stack.agent.settings.get().models?.['shared/model']?.enabled).toBe(false);
  });

  it('balances a model served by both engines', async () => {
    stack = await twoEngineStack({ MaxConcurrentPerEndpoint: 2 }, { generate: 20, delayMs: 5 });
    await stack.agent.start();
    await withEngineHosts(stack);
    await stack.agent.invoke('models.setEnabled', { model: 'shared/model', enabled: true });
    await until(() => stack!.hub!.providers()[0]?.models.includes('shared/model') ?? false, 'model announced');
    const texts = await Promise.all(
      Array.from({ length: 4 }, async () =>
        chunkText(await readSse(await chat(stack!.hub!, { model: 'shared/model', stream: true, messages: [{ role: 'user', content: 'x' }] }))),
      ),
    );
    expect(texts).toEqual(Array(4).fill(generatedText(20)));
    const count = (i: number) => stack!.engines[i]!.requests.filter((r) => r.path === '/v1/chat/completions').length;
    expect(count(0)).toBe(2);
    expect(count(1)).toBe(2);
  });

  it('rejects a burst beyond capacity at once and answers every request', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 30, delayMs: 10 } }], agent: { MaxConcurrentPerEndpoint: 2, MaxQueuePerModel: 3 } });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const results = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await chat(stack!.hub!, { model, stream: true, messages: [{ role: 'user', content: 'x' }] });
        return { status: res.status, text: res.status === 200 ? chunkText(await readSse(res)) : await res.text() };
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const rejected = results.filter((r) => r.status === 429);
    expect(ok.length).toBe(5); // 2 running + 3 queued
    expect(rejected.length).toBe(15);
    for (const r of ok) expect(r.text).toBe(generatedText(30));
    for (const r of rejected) expect(r.text).toMatch(/capacity|busy|queue|try again/i);
  });

  it('pauses without dropping an in-flight request, withdraws models from the hub, and resumes', async () => {
    stack = await startStack({ engines: [{ mode: { generate: 60, delayMs: 10 } }] });
    await registered(stack);
    const model = stack.engines[0]!.modelIds[0]!;
    const inFlight = chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'long' }] });
    await stack.engines[0]!.waitForEvents(3);
    await stack.agent.invoke('serving.pause', { reason: 'gaming' });
    await until(() => stack!.hub!.providers()[0]!.models.length === 0, 'models withdrawn while paused');
    // a new request sent straight to the agent is refused while paused
    const refused = await stack.hub!.call(
      stack.hub!.providers()[0]!.nodeId,
      'inference',
      { model_id: model, stream: true, request: { model, messages: [{ role: 'user', content: 'x' }] } },
      'stream_end',
      3000,
    );
    // Refused on the stream's result path (stream_end with the status), not as an error frame.
    expect(refused).toMatchObject({ _type: 'stream_end', status_code: 429, error: expect.any(String) });
    // the in-flight one completes in full
    expect(chunkText(await readSse(await inFlight))).toBe(generatedText(60));
    await stack.agent.invoke('serving.resume', {});
    await until(() => stack!.hub!.providers()[0]!.models.includes(model), 'models announced again');
    const after = await chat(stack.hub!, { model, stream: true, messages: [{ role: 'user', content: 'again' }] });
    expect(after.status).toBe(200);
  });
});
