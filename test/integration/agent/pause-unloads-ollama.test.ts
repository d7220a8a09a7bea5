// [Agent] PauseFreesGpu with Ollama: a pause asks Ollama to unload the models this agent serves from it
// (POST /api/generate with keep_alive 0, Ollama's "Unload a model"), so the GPU is free for the owner's game
// at once rather than when Ollama's own keep-alive runs out; the owner's other Ollama models are left alone,
// and without the setting a pause unloads nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OllamaStandIn } from '../../support/ollama-standin';
import { registered, startStack, until, type Stack } from '../../support/stack';

const SERVED = 'qwen2.5:0.5b';
const OWNERS = 'llama3.2:1b';

let stack: Stack | undefined;
let ollama: OllamaStandIn;
beforeEach(async () => {
  ollama = await OllamaStandIn.start();
  ollama.pulled.push(SERVED, OWNERS);
  ollama.loaded.add(SERVED).add(OWNERS);
});
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await ollama.close();
});

async function withOllama(pauseFreesGpu: boolean): Promise<Stack> {
  const s = await startStack({ engines: [], agent: { PauseFreesGpu: pauseFreesGpu } });
  await registered(s);
  await s.agent.invoke('engines.addEndpoint', { url: ollama.url });
  await until(() => s.agent.snapshot().models.some((m) => m.id === SERVED), 'the Ollama models listed');
  // Found models start switched off: the owner serves one of them.
  await s.agent.invoke('models.setEnabled', { model: SERVED, enabled: true });
  return s;
}

const unloads = () =>
  ollama.requests
    .filter((r) => r.path === '/api/generate' && (r.body as { keep_alive?: unknown }).keep_alive === 0)
    .map((r) => (r.body as { model: string }).model);

describe('a pause that frees the GPU', () => {
  it('unloads the served Ollama model, and only that one', async () => {
    stack = await withOllama(true);
    await stack.agent.invoke('serving.pause', {});
    await until(() => !ollama.loaded.has(SERVED), 'the served model unloaded', 10_000);
    expect(unloads()).toEqual([SERVED]);
    expect(ollama.loaded.has(OWNERS)).toBe(true);
  });

  it('without [Agent] PauseFreesGpu, a pause unloads nothing', async () => {
    stack = await withOllama(false);
    await stack.agent.invoke('serving.pause', {});
    await until(() => stack!.agent.snapshot().pause.paused, 'paused');
    // The pause is fully applied once the snapshot says so; an unload would have been asked in the same turn.
    await stack.agent.invoke('serving.resume', {});
    expect(unloads()).toEqual([]);
    expect(ollama.loaded.has(SERVED)).toBe(true);
  });
});
