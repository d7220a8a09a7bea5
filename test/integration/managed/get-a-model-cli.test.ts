// From a GPU to an earning model on the command line, as an owner types it: `models recommend` lists what the
// network pays for with our fit and the earnings here, `models download` fetches it verified from the
// network's model repository (a dev hub carrying one), `models serve <id>` with no --weights serves the
// downloaded file, `run` starts the real llama-server of ../shared/engines/llama.cpp, a request through the
// hub is answered, and the hub's fingerprint challenge for the downloaded file passes.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import { CliProcess, runCli } from '../../support/cli/cli';
import { LLAMA_ENV, LLAMA_PRESENT, managedHome, TINY } from '../../support/live/llama';
import { tempHome, TEST_KEY, until } from '../../support/stack';

const SKIP = 'skipped: ../shared/engines/llama.cpp is absent (this walk serves with the real llama-server)';
const ID = 'swan-test/tiny-walk';
const ENV = LLAMA_ENV;

describe.skipIf(!LLAMA_PRESENT)(LLAMA_PRESENT ? 'recommend → download → serve → answered → fingerprint, from the CLI' : `the CLI walk — ${SKIP}`, () => {
  let hub: DevHub;
  let home: string;
  let repo: string;
  let agent: CliProcess | undefined;

  beforeAll(async () => {
    repo = tempHome('swan-walk-repo-');
    fs.mkdirSync(path.join(repo, ...ID.split('/')), { recursive: true });
    fs.copyFileSync(TINY, path.join(repo, ...ID.split('/'), 'model.gguf'));
    hub = await startDevHub({ token: TEST_KEY, repository: repo });
    home = managedHome('swan-walk-', 'walk', hub);
  });

  afterAll(async () => {
    await agent?.stop();
    await hub?.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  }, 30_000);

  it('recommend lists it with a fit from its GGUF header and an earnings figure', async () => {
    const r = await runCli(['models', 'recommend', '--home', home, '--json', '--vram-gb', '8']);
    expect(r.code).toBe(0);
    const row = (JSON.parse(r.stdout) as { models: Array<Record<string, unknown>> }).models.find((m) => m.model_id === ID);
    expect(row).toMatchObject({ fit: 'fits', in_repository: true, on_disk: 'none' });
    expect(row?.estimate).toMatchObject({ exact: true });
    expect(row?.earn_here_daily_usd).toBeGreaterThan(0);
  }, 60_000);

  it('download ends verified; serve with no --weights takes the downloaded file; run answers through the hub; the fingerprint passes', async () => {
    const d = await runCli(['models', 'download', '--home', home, ID]);
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^verified: swan-test\/tiny-walk/);

    const s = await runCli(['models', 'serve', '--home', home, '--context-length', '256', '--slots', '1', ID, '--', '-t', '1'], ENV);
    expect(s.code).toBe(0);
    const desired = JSON.parse(fs.readFileSync(path.join(home, 'managed-engines.json'), 'utf8')) as { engines: Array<{ id: string; weights?: string }> };
    expect(desired.engines.find((e) => e.id === ID)?.weights).toBe(path.join(home, 'models', ...ID.split('/'), 'model.gguf'));

    agent = CliProcess.start(['run', '--home', home, '--no-discovery'], ENV);
    await until(
      () =>
        hub
          .providers()
          .find((p) => p.connected)
          ?.models.includes(ID) === true,
      'announced',
      40_000,
    );
    const answer = await new OpenAI({ baseURL: `${hub.url}/v1`, apiKey: 'any', maxRetries: 0 }).chat.completions.create({
      model: ID,
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 2,
    });
    expect(answer.usage?.completion_tokens).toBe(2);

    const sha = createHash('sha256').update(fs.readFileSync(TINY)).digest('hex');
    const res = await fetch(`${hub.url}/dev/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        challenge_id: 'fp-cli',
        challenge_type: 'fingerprint',
        model_id: ID,
        challenge: { files: [{ filename: 'model.gguf', expected_hash: sha }] },
      }),
    });
    const reply = (await res.json()) as { success?: boolean; response?: { files?: Array<{ status: string }> } };
    expect(reply).toMatchObject({ success: true });
    expect(reply.response?.files?.map((f) => f.status)).toEqual(['pass']);
    // A wrong hash fails: the check reads the real file, it does not echo what it was sent.
    const wrong = await fetch(`${hub.url}/dev/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        challenge_id: 'fp-cli-2',
        challenge_type: 'fingerprint',
        model_id: ID,
        challenge: { files: [{ filename: 'model.gguf', expected_hash: 'ab'.repeat(32) }] },
      }),
    });
    expect(((await wrong.json()) as { success?: boolean }).success).toBe(false);
  }, 120_000);
});
