// [Agent] PauseFreesGpu: pausing stops the engine the agent runs (its process ends, the GPU is free) and
// resuming starts it again, announced and answering; the real llama-server of ../shared/engines/llama.cpp.
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, registered, startStack, until, type Stack } from '../../support/stack';
import { LLAMA_ENV, LLAMA_PRESENT, TINY } from '../../support/live/llama';
import type { ManagedEngineView } from '../../../src/shared/views/managed';
import { processAlive } from '../../../src/core/base/process-alive';
import { repoRoot } from '../../support/traces';

const FAKE_GPU = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const ID = 'swan-test/tiny-pause';

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'pause frees the GPU' : `pause frees the GPU — ${SKIP}`, () => {
  let s: Stack;
  const view = async (): Promise<ManagedEngineView | undefined> => (await call(s.agent, 'managed.list', {})).find((e) => e.id === ID);

  beforeAll(async () => {
    s = await startStack({
      engines: [],
      models: {},
      agent: { PauseFreesGpu: true },
      env: LLAMA_ENV,
    });
    await registered(s);
  }, 30_000);

  afterAll(async () => {
    await s?.close();
  }, 30_000);

  it('pause stops the managed engine; resume starts it again and it answers', async () => {
    await call(s.agent, 'managed.serve', { id: ID, weights: TINY, contextLength: 256 });
    await until(async () => (await view())?.phase === 'serving', 'serving', 30_000);
    const { pid } = (await view())!;

    await call(s.agent, 'serving.pause', {});
    await until(async () => (await view())?.phase === 'stopped', 'stopped by the pause', 15_000);
    expect(processAlive(pid!)).toBe(false);

    await call(s.agent, 'serving.resume', {});
    await until(async () => (await view())?.phase === 'serving', 'serving again after resume', 30_000);
    await until(() => s.hub!.providers().some((p) => p.connected && p.models.includes(ID)), 'announced again', 10_000);
    const a = await new OpenAI({ baseURL: `${s.hub!.url}/v1`, apiKey: 'any', maxRetries: 0 }).chat.completions.create({
      model: ID,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    expect(a.usage?.completion_tokens).toBe(2);
  }, 90_000);
});

// Per-GPU: on a rig with two GPUs (the stand-in nvidia-smi), the engine the agent runs on GPU 1 is stopped when
// the owner gives GPU 1 back (its wish kept, shown as held) and started again when GPU 1 serves again.
describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'giving one GPU back frees it' : `giving one GPU back frees it — ${SKIP}`, () => {
  let s: Stack;
  const GPU_ID = 'swan-test/tiny-on-gpu1';
  const view = async (): Promise<ManagedEngineView | undefined> => (await call(s.agent, 'managed.list', {})).find((e) => e.id === GPU_ID);

  beforeAll(async () => {
    s = await startStack({
      engines: [],
      models: {},
      gpu: true,
      agent: { PauseFreesGpu: true },
      env: { ...LLAMA_ENV, PATH: `${FAKE_GPU}${path.delimiter}${LLAMA_ENV.PATH}`, FAKE_GPU_COUNT: '2', FAKE_GPU_UTIL: '5' },
    });
    await registered(s);
    await until(() => s.agent.snapshot().gpu.gpus.length === 2, 'two GPUs detected');
  }, 30_000);

  afterAll(async () => {
    await s?.close();
  }, 30_000);

  it('give GPU 1 back: its engine stops (held); serve again: it starts and answers', async () => {
    await call(s.agent, 'managed.serve', { id: GPU_ID, weights: TINY, contextLength: 256, gpus: '1' });
    await until(async () => (await view())?.phase === 'serving', 'serving', 30_000);
    const { pid } = (await view())!;

    const after = await call(s.agent, 'gpu.giveBack', { index: 1, givenBack: true });
    expect(after.map((g) => g.serving)).toEqual([true, false]);
    await until(async () => (await view())?.held === true && (await view())?.phase === 'stopped', 'stopped and held', 15_000);
    expect(processAlive(pid!)).toBe(false);
    await until(() => !s.hub!.providers().some((p) => p.connected && p.models.includes(GPU_ID)), 'not announced', 10_000);

    await call(s.agent, 'gpu.giveBack', { index: 1, givenBack: false });
    await until(async () => (await view())?.phase === 'serving', 'serving again', 30_000);
    expect((await view())?.held).toBeUndefined();
    await until(() => s.hub!.providers().some((p) => p.connected && p.models.includes(GPU_ID)), 'announced again', 10_000);
  }, 90_000);
});
