// From a GPU and an empty home to a served model, in Chromium against the real agent: onboarding to a dev
// hub that carries a model repository (`dev-hub --repository`, the Swan repository's routes), step 3 has no
// engine and no model, "Get a model for this GPU" shows what the network pays for with this GPU's fit and the
// earnings estimate, Download shows its progress and ends verified, Serve starts the real llama-server of
// ../shared/engines/llama.cpp under the catalogue id, the verdict says Serving, a request through the hub is
// answered by it, and the hub's fingerprint challenge for the downloaded file passes.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { PROVIDER_KEY, repoRoot, startCli, CONSOLE_LINE, type Proc } from './support/stack';
import { continueFromKey, slug } from './support/fixtures';

const LLAMA = path.resolve(repoRoot, '..', 'shared', 'engines', 'llama.cpp');
const GGUF = path.join(LLAMA, 'models', 'small.gguf');
const PRESENT = fs.existsSync(path.join(LLAMA, 'bin', 'llama-server')) && fs.existsSync(GGUF);
const ID = 'swan-test/small-chat';
const FAKE_GPU = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');

test.skip(!PRESENT, 'skipped: ../shared/engines/llama.cpp is absent (this walk serves with the real llama-server)');
// Two processes, a download and an engine start on two shared cores.
test.slow();

let root: string;
let hub: Proc;
let agent: Proc;
let hubUrl: string;
let consoleUrl: string;

test.beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-get-model-'));
  const repo = path.join(root, 'repository');
  fs.mkdirSync(path.join(repo, ...ID.split('/')), { recursive: true });
  fs.copyFileSync(GGUF, path.join(repo, ...ID.split('/'), 'model.gguf'));
  const env: NodeJS.ProcessEnv = { ...process.env, CP_PATH: path.join(root, 'no-go-provider') };
  for (const k of ['INFERENCE_API_KEY', 'INFERENCE_WS_URL', 'SWAN_NETWORK_STAND_INS', 'SWAN_MODELS_DIR']) delete env[k];
  // The owner's machine: one GPU (the vendor tool's captured output) and llama.cpp installed on PATH.
  env.PATH = [FAKE_GPU, path.join(LLAMA, 'bin'), process.env.PATH ?? ''].join(path.delimiter);
  env.LD_LIBRARY_PATH = path.join(LLAMA, 'lib');
  // A slow network for the repository's bytes, so the download is seen while it runs (about 5 s).
  hub = startCli(
    'dev hub',
    ['dev-hub', '--port', '0', '--token', PROVIDER_KEY, '--home', path.join(root, 'hub'), '--repository', repo, '--repository-rate', String(4 * 1024 * 1024)],
    env,
  );
  [, hubUrl] = (await hub.waitForLine(/dev hub listening on (http:\/\/127\.0\.0\.1:\d+)/)) as RegExpMatchArray & [string, string];
  agent = startCli('agent', ['run', '--home', path.join(root, 'home'), '--init-if-missing', '--no-discovery', '--console', '127.0.0.1:0'], env);
  [, consoleUrl] = (await agent.waitForLine(CONSOLE_LINE)) as RegExpMatchArray & [string, string];
});

test.afterEach(async ({}, testInfo) => {
  if (testInfo.status !== testInfo.expectedStatus)
    await testInfo.attach('processes.log', {
      body: `--- agent ---\n${agent.output.join('')}\n--- dev hub ---\n${hub.output.join('')}`,
      contentType: 'text/plain',
    });
  await agent.stop();
  await hub.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

test('onboarding → get a model → fit and earnings → download (progress) → serve → Serving → a hub request answered → fingerprint passes', async ({ page }) => {
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(consoleUrl);
  await expect(page.getByTestId('page-onboarding')).toBeVisible();

  // Steps 1 and 2: the dev hub, and the key it takes.
  await page.getByTestId('network-custom').check();
  await page.getByTestId('custom-hub-url').fill(hubUrl.replace(/^http/, 'ws'));
  await page.getByTestId('custom-service-url').fill(hubUrl);
  await page.getByTestId('network-save').click();
  await page.getByTestId('key-input').fill(PROVIDER_KEY);
  await page.getByTestId('key-check').click();
  await expect(page.getByTestId('key-status-badge')).toHaveText('active');
  await continueFromKey(page);

  // Step 3: no engine, no model: get one.
  await expect(page.getByTestId('onboarding-no-models')).toBeVisible();
  await page.getByTestId('onboarding-get-model').click();
  const s = slug(ID);
  const row = page.getByTestId(`recommend-row-${s}`);
  await expect(row).toBeVisible();
  await expect(page.getByTestId('recommend-gpu')).toContainText('1 GPU(s)');
  // Our estimate from the GGUF header, read by byte ranges before any download: it fits this GPU.
  await expect(page.getByTestId(`fit-${s}`)).toHaveAttribute('data-fit', 'fits');
  await expect(page.getByTestId(`earn-${s}`)).toContainText('/ day');

  await page.getByTestId(`download-${s}`).click();
  const progress = page.getByTestId(`download-progress-${s}`);
  await expect(progress).toHaveAttribute('data-phase', 'downloading');
  await expect(progress).toContainText('%');
  await expect(page.getByTestId(`download-done-${s}`)).toHaveAttribute('data-phase', 'verified', { timeout: 60_000 });

  await page.getByTestId(`serve-${s}`).click();
  await expect(page.getByTestId(`managed-row-${s}`)).toHaveAttribute('data-phase', 'serving', { timeout: 60_000 });
  await expect(page.getByTestId(`managed-row-${s}`)).toContainText('model.gguf');

  await page.getByTestId('serve-continue').click();
  await page.getByTestId('onboarding-go').click();
  await expect(page.getByTestId('page-dashboard')).toBeVisible();
  await expect(page.getByTestId('sidebar-link-state')).toHaveAttribute('data-verdict', 'serving', { timeout: 30_000 });

  // A request through the hub, answered by the llama-server the agent started.
  const res = await fetch(`${hubUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: ID, stream: false, max_tokens: 4, messages: [{ role: 'user', content: 'Hello?' }] }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { model?: string; usage?: { completion_tokens?: number } };
  expect(body.usage?.completion_tokens).toBe(4);

  // The network's fingerprint challenge for the downloaded file: the hash it expects, answered from the manifest.
  const sha = createHash('sha256').update(fs.readFileSync(GGUF)).digest('hex');
  const verify = await fetch(`${hubUrl}/dev/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      challenge_id: 'fp-1',
      challenge_type: 'fingerprint',
      model_id: ID,
      challenge: { files: [{ filename: 'model.gguf', expected_hash: sha }] },
    }),
  });
  expect(verify.status).toBe(200);
  const reply = (await verify.json()) as { success?: boolean; response?: { files?: Array<{ status: string }> } };
  expect(reply.success).toBe(true);
  expect(reply.response?.files?.map((f) => f.status)).toEqual(['pass']);
  expect(problems).toEqual([]);
});
