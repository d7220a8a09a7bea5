// A mapping the engine contradicts is held back: the shared tiny.gguf (147,392 parameters, as the real
// llama-server reports) mapped in models.json as meta-llama/Llama-3.1-8B-Instruct is not announced, the
// console and the verdict carry mapping_contradicts_engine / mapping_parameters_mismatch, and only the
// owner's confirmation of that very finding announces it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, modelOf, registered, startStack, until, type Stack } from '../../support/stack';
import { Llama, LLAMA_PRESENT, TINY } from '../../support/live/llama';
import { freePort } from '../../support/stack';
import { runCli } from '../../support/cli/cli';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const ID = 'meta-llama/Llama-3.1-8B-Instruct';

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'mapping checked against the engine' : `mapping check — ${SKIP}`, () => {
  let s: Stack;
  let llama: Llama;
  const hubModels = () => s.hub!.providers().find((p) => p.connected)?.models ?? [];

  beforeAll(async () => {
    llama = new Llama(await freePort(), ['-np', '1']);
    await llama.start();
    s = await startStack({ engines: [], models: {} });
    await registered(s);
    // Hand-written while the agent runs, as an owner would: the network id → the engine's own name for the file (its -m path).
    fs.writeFileSync(path.join(s.home, 'models.json'), JSON.stringify({ [ID]: { endpoint: llama.url, local_model: TINY } }));
  }, 60_000);

  afterAll(async () => {
    await s?.close();
    await llama?.kill();
  }, 30_000);

  it('is not announced, and says why with a stable code', async () => {
    let seenAtHub = false;
    await until(
      () => {
        seenAtHub ||= hubModels().includes(ID);
        return modelOf(s.agent, ID)?.mapping?.code === 'mapping_parameters_mismatch';
      },
      'the engine report read and checked',
      15_000,
    );
    // Not even for a moment before the engine's report was read.
    expect(seenAtHub).toBe(false);
    expect(modelOf(s.agent, ID)?.mapping).toMatchObject({ code: 'mapping_parameters_mismatch', engineModel: TINY, confirmed: false });
    // Announced nowhere: the hub's view and the agent's own.
    await until(() => !hubModels().includes(ID), 'not announced to the hub', 5000);
    const v = s.agent.snapshot().verdict;
    expect(v.reasons.map((r) => r.code)).toContain('mapping_contradicts_engine');
    expect(v.routable).not.toContain(ID);
    // doctor says the same, with the code, and fails.
    const doctor = await runCli(['doctor', '--home', s.home]);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/✗ meta-llama\/Llama-3\.1-8B-Instruct \[mapping_parameters_mismatch\]: .* Not announced\./);
  }, 60_000);

  it("a confirmation of another finding is refused; the owner's confirmation of this one announces it", async () => {
    await expect(call(s.agent, 'models.confirmMapping', { model: ID, signature: 'parameters:other:1' })).rejects.toMatchObject({ code: 'refused' });
    const { signature } = modelOf(s.agent, ID)!.mapping!;
    await call(s.agent, 'models.confirmMapping', { model: ID, signature });
    expect(modelOf(s.agent, ID)?.mapping?.confirmed).toBe(true);
    await until(() => hubModels().includes(ID), 'announced once confirmed', 5000);
  }, 30_000);
});
