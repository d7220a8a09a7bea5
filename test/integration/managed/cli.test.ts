// `swan-provider models serve | ps | stop` as an owner types them, with the real llama-server of
// ../shared/engines/llama.cpp: a serve recorded while no agent runs starts when `run` starts; the hub's
// request is answered; `models stop` leaves no process and no announcement; a serve while the agent runs is
// followed to "Serving"; the agent's own stop ends the engine it started. `--dry-run` prints the command.
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import { CliProcess, runCli } from '../../support/cli/cli';
import { LLAMA_ENV, LLAMA_PRESENT, managedHome, TINY } from '../../support/live/llama';
import { tempHome, TEST_KEY, until } from '../../support/stack';
import { processAlive } from '../../../src/core/base/process-alive';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this suite runs the real llama-server)';
const ID = 'swan-test/tiny-cli';
const ENV = LLAMA_ENV;

interface Ps {
  agentRunning: boolean;
  engines: Array<{ id: string; phase: string; pid?: number; url?: string; restarts: number }>;
}

/** A weights file of our own for the tests that never start the server (no ../shared needed): GGUF magic, then nothing. */
function ownGguf(home: string): string {
  const file = path.join(home, 'tiny.gguf');
  fs.writeFileSync(file, Buffer.from('GGUF'));
  return file;
}

describe('models serve --dry-run', () => {
  it('prints the llama-server command with --alias = the id, and changes nothing', async () => {
    const home = tempHome('swan-serve-dry-');
    const r = await runCli(
      [
        'models',
        'serve',
        '--home',
        home,
        '--dry-run',
        '--weights',
        ownGguf(home),
        '--context-length',
        '512',
        '--slots',
        '2',
        'meta-llama/Llama-3.1-8B-Instruct',
        '--',
        '-t',
        '2',
      ],
      ENV,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /LLAMA_API_KEY=<key> \S*llama-server -m \S+tiny\.gguf --alias meta-llama\/Llama-3\.1-8B-Instruct --host 127\.0\.0\.1 --port \d+ -ngl 999 -np 2 -c 1024 -t 2/,
    );
    expect(fs.existsSync(path.join(home, 'managed-engines.json'))).toBe(false);
    const v = await runCli([
      'models',
      'serve',
      '--home',
      home,
      '--dry-run',
      '--backend',
      'vllm',
      '--gpus',
      '0,1',
      '--weights',
      home,
      'Qwen/Qwen2.5-7B-Instruct',
    ]);
    expect(v.stdout).toMatch(
      /^docker run --detach --name swan-qwen-qwen2\.5-7b-instruct --label io\.swanchain\.provider-console\.managed=true .*--publish 127\.0\.0\.1:\d+:8000 .*vllm\/vllm-openai:latest --model \/models --served-model-name Qwen\/Qwen2\.5-7B-Instruct .*--tensor-parallel-size 2/,
    );
    fs.rmSync(home, { recursive: true, force: true });
  }, 60_000);

  it('no llama-server anywhere: refused with how to get one (llama_server_missing)', async () => {
    const home = tempHome('swan-serve-none-');
    const r = await runCli(['models', 'serve', '--home', home, '--weights', ownGguf(home), ID], { PATH: '/nonexistent' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/llama_server_missing/);
    expect(r.stderr).toMatch(/github\.com\/ggml-org\/llama\.cpp\/releases/);
    expect(fs.existsSync(path.join(home, 'managed-engines.json'))).toBe(false);
    fs.rmSync(home, { recursive: true, force: true });
  }, 60_000);
});

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'models serve / ps / stop with the real llama-server' : `models serve — ${SKIP}`, () => {
  let hub: DevHub;
  let home: string;
  let agent: CliProcess | undefined;
  const ps = async (): Promise<Ps> => JSON.parse((await runCli(['models', 'ps', '--home', home, '--json'])).stdout) as Ps;
  const hubModels = () => hub.providers().find((p) => p.connected)?.models ?? [];

  beforeAll(async () => {
    hub = await startDevHub({ token: TEST_KEY });
    home = managedHome('swan-serve-cli-', 'serve-cli', hub);
  });

  afterAll(async () => {
    await agent?.stop();
    await hub?.close();
    fs.rmSync(home, { recursive: true, force: true });
  }, 30_000);

  it('recorded with no agent running; started when the agent starts; the hub request answered', async () => {
    const r = await runCli(['models', 'serve', '--home', home, '--weights', TINY, '--context-length', '256', '--slots', '1', ID, '--', '-t', '1'], ENV);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/No agent runs with this home now: it starts when the agent does/);
    expect(await ps()).toMatchObject({ agentRunning: false, engines: [{ id: ID, phase: 'not_running' }] });

    agent = CliProcess.start(['run', '--home', home, '--no-discovery'], ENV);
    await until(async () => (await ps()).engines[0]?.phase === 'serving', 'serving after the agent started', 40_000);
    await until(() => hubModels().includes(ID), 'announced', 10_000);
    const answer = await new OpenAI({ baseURL: `${hub.url}/v1`, apiKey: 'any', maxRetries: 0 }).chat.completions.create({
      model: ID,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    expect(answer.usage?.completion_tokens).toBe(2);
  }, 90_000);

  it('models stop leaves no process and no announcement', async () => {
    const { pid } = (await ps()).engines[0]!;
    const r = await runCli(['models', 'stop', '--home', home, ID]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Stopped/);
    expect(processAlive(pid!)).toBe(false);
    await until(() => !hubModels().includes(ID), 'withdrawn', 10_000);
    expect((await ps()).engines).toEqual([]);
    // Stopping what it does not run is refused, and stops nothing.
    expect((await runCli(['models', 'stop', '--home', home, 'other/model'])).code).toBe(1);
  }, 60_000);

  it('a serve while the agent runs is followed to "Serving"; the agent\'s stop ends the engine', async () => {
    const r = await runCli(['models', 'serve', '--home', home, '--weights', TINY, '--context-length', '256', ID, '--', '-t', '1'], ENV);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Serving: swan-test\/tiny-cli answers at http:\/\/127\.0\.0\.1:\d+/);
    const { pid } = (await ps()).engines[0]!;
    expect(processAlive(pid!)).toBe(true);
    await agent!.stop();
    agent = undefined;
    expect(processAlive(pid!)).toBe(false);
    expect(await ps()).toMatchObject({ agentRunning: false, engines: [{ id: ID, phase: 'not_running' }] });
  }, 90_000);
});
