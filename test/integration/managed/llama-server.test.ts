// The agent runs the real llama-server of ../shared/engines/llama.cpp for the owner: asked through the
// home's managed-engines.json (what `models serve` writes), it starts the engine with --alias = the model id,
// waits until it answers, announces the model, and a hub request is answered; killed with SIGKILL, it is
// restarted (said in the log, counted in the console) and the next request is served; stopped, it leaves no
// process and no announcement.
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, logEntries, registered, startStack, until, type Stack } from '../../support/stack';
import { LLAMA_DIR, LLAMA_PRESENT, TINY } from '../../support/live/llama';
import { addDesired, parseServeSpec } from '../../../src/core/managed/spec';
import type { ManagedEngineView } from '../../../src/shared/views/managed';
import { processAlive } from '../../../src/core/base/process-alive';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const ID = 'swan-test/tiny-chat';

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'managed llama-server' : `managed llama-server — ${SKIP}`, () => {
  let s: Stack;
  const view = async (): Promise<ManagedEngineView | undefined> => (await call(s.agent, 'managed.list', {})).find((e) => e.id === ID);
  const hubModels = () => s.hub!.providers().find((p) => p.connected)?.models ?? [];
  const ask = () =>
    new OpenAI({ baseURL: `${s.hub!.url}/v1`, apiKey: 'any', maxRetries: 0 }).chat.completions.create({
      model: ID,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 3,
    });

  beforeAll(async () => {
    s = await startStack({
      engines: [],
      models: {},
      env: {
        PATH: `${path.join(LLAMA_DIR, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
        LD_LIBRARY_PATH: path.join(LLAMA_DIR, 'lib'),
      },
    });
    await registered(s);
  }, 30_000);

  afterAll(async () => {
    await s?.close();
  }, 30_000);

  it('starts from the home file, announces the id, and a hub request is answered', async () => {
    // As `models serve` records it, while the agent runs: the agent sees the file change by itself.
    addDesired(s.home, parseServeSpec({ id: ID, backend: 'llamacpp', weights: TINY, contextLength: 256, slots: 2, args: ['-t', '1'], addedAt: Date.now() }));
    await until(async () => (await view())?.phase === 'serving', 'the managed engine serving', 30_000);
    await until(() => hubModels().includes(ID), 'the model announced to the hub', 10_000);
    const v = (await view())!;
    expect(v.command).toMatch(/--alias swan-test\/tiny-chat/);
    expect(v.command).not.toMatch(/sk-managed/);
    expect(fs.statSync(path.join(s.home, 'managed-state.json')).mode & 0o777).toBe(0o600);
    expect((await ask()).usage?.completion_tokens).toBe(3);
    // The engine's key is never in the log.
    expect((await logEntries(s.agent)).some((l) => /sk-managed-/.test(l.msg))).toBe(false);
  }, 60_000);

  it('a SIGKILL is recovered: restarted with backoff, said in the log, and the next request served', async () => {
    const before = (await view())!;
    process.kill(before.pid!, 'SIGKILL');
    await until(async () => (await view())?.restarts === 1, 'the restart counted', 10_000);
    expect((await view())?.code).toBe('engine_crashed');
    await until(
      async () => {
        const v = await view();
        return v?.phase === 'serving' && v.pid !== before.pid;
      },
      'serving again',
      30_000,
    );
    expect((await logEntries(s.agent)).some((l) => /ended \(signal SIGKILL\); restarting in/.test(l.msg))).toBe(true);
    // The same endpoint as before, so the hub's route never changed; the health check sees it back.
    expect((await view())?.url).toBe(before.url);
    await until(
      async () => {
        try {
          return (await ask()).usage?.completion_tokens === 3;
        } catch {
          return false;
        }
      },
      'a request served after the restart',
      20_000,
    );
  }, 60_000);

  it('stop leaves no process and no announcement', async () => {
    const { pid } = (await view())!;
    await call(s.agent, 'managed.stop', { id: ID });
    expect(await view()).toBeUndefined();
    expect(processAlive(pid!)).toBe(false);
    await until(() => !hubModels().includes(ID), 'the model withdrawn from the hub', 10_000);
    const state = JSON.parse(fs.readFileSync(path.join(s.home, 'managed-state.json'), 'utf8')) as { engines: unknown[] };
    expect(state.engines).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(s.home, 'managed-engines.json'), 'utf8'))).toEqual({ engines: [] });
  }, 30_000);
});
