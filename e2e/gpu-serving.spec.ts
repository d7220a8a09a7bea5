// Per-GPU serving in Chromium against the real agent, its real GPU detection and process checks (a stand-in
// nvidia-smi with two GPUs whose process list a file gives), and the dev hub: models.json places one model on
// each GPU. A game on GPU 0 pauses GPU 0's model only (the hub is told of the other); the owner gives GPU 1
// back and takes it again from the Dashboard; the game ends and GPU 0 serves again by itself; a schedule window
// for GPU 1 only pauses GPU 1. The Usage page lists each decision with its code.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, go, slug, test } from './support/fixtures';

const ON_0 = 'simulated-llama-3.1-8b-instruct';
const ON_1 = 'simulated-qwen2.5-7b-instruct';
let appsFile = '';

test.use({
  stackOptions: async ({}, use) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-gpus-'));
    appsFile = path.join(dir, 'apps');
    fs.writeFileSync(appsFile, '');
    await use({
      withKey: true,
      gpu: true,
      tokensPerSecond: 40,
      gpus: { count: 2, utilization: 5, appsFile, checkSeconds: 1 },
      modelGpus: { [ON_0]: [0], [ON_1]: [1] },
    });
    fs.rmSync(dir, { recursive: true, force: true });
  },
});

const announced = async (stack: { provider: () => Promise<{ models: string[] } | undefined> }) => [...((await stack.provider())?.models ?? [])].sort();

test('a GPU given back while the other serves; a game on one GPU pauses only its model', async ({ app, stack }) => {
  test.slow();
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect.poll(() => announced(stack)).toEqual([ON_0, ON_1].sort());
  await expect(app.getByTestId('gpu-serving-0')).toHaveAttribute('data-serving', 'true');
  await expect(app.getByTestId('gpu-serving-1')).toHaveAttribute('data-serving', 'true');

  // The owner's rule: pause (a GPU) while another program uses it.
  await go(app, 'engines');
  await app.getByTestId('auto-pause-toggle').click();
  await expect(app.getByTestId(`model-gpus-${slug(ON_0)}`)).toHaveAttribute('data-source', 'owner');

  // A game takes 6 GB on GPU 0: its model is held, the other keeps serving.
  fs.writeFileSync(appsFile, '4242, game.exe, 0, 6000\n');
  await expect(app.getByTestId(`model-gpus-${slug(ON_0)}`)).toHaveAttribute('data-held', 'gpu_busy');
  await expect(app.getByTestId(`model-gpus-${slug(ON_1)}`)).toHaveAttribute('data-held', '');
  await expect.poll(() => announced(stack)).toEqual([ON_1]);
  await go(app, 'dashboard');
  await expect(app.getByTestId('gpu-serving-0')).toHaveAttribute('data-cause', 'gpu_busy');
  await expect(app.getByTestId('gpu-serving-0')).toContainText('game.exe');
  await expect(app.getByTestId('gpu-serving-1')).toHaveAttribute('data-serving', 'true');
  await expect(app.getByTestId('op-summary').locator('li[data-code="model_gpu_paused"]')).toHaveCount(1);

  // The owner gives GPU 1 back too: nothing is offered; then takes it again.
  await app.getByTestId('gpu-give-back-1').click();
  await expect(app.getByTestId('gpu-serving-1')).toHaveAttribute('data-cause', 'given_back');
  await expect.poll(() => announced(stack)).toEqual([]);
  await app.getByTestId('gpu-give-back-1').click();
  await expect(app.getByTestId('gpu-serving-1')).toHaveAttribute('data-serving', 'true');
  await expect.poll(() => announced(stack)).toEqual([ON_1]);

  // The game ends: GPU 0 serves again by itself (after its clear readings).
  fs.writeFileSync(appsFile, '');
  await expect(app.getByTestId('gpu-serving-0')).toHaveAttribute('data-serving', 'true', { timeout: 20_000 });
  await expect.poll(() => announced(stack)).toEqual([ON_0, ON_1].sort());

  // A schedule window for GPU 1 only (all day, every day): GPU 1 pauses, GPU 0 serves; removed, both serve.
  await go(app, 'engines');
  await app.getByTestId('schedule-add').click();
  const row = app.getByTestId('schedule-row-0');
  for (const day of ['Sun', 'Sat']) await row.getByLabel(day).check();
  await app.getByTestId('schedule-from-0').fill('00:00');
  await app.getByTestId('schedule-to-0').fill('00:00');
  await app.getByTestId('schedule-gpus-0').selectOption('1');
  await app.getByTestId('schedule-save').click();
  await expect(app.getByTestId(`model-gpus-${slug(ON_1)}`)).toHaveAttribute('data-held', 'schedule');
  await expect.poll(() => announced(stack)).toEqual([ON_0]);
  await row.getByRole('button', { name: 'Remove window 1' }).click();
  await app.getByTestId('schedule-save').click();
  await expect(app.getByTestId(`model-gpus-${slug(ON_1)}`)).toHaveAttribute('data-held', '');
  await expect.poll(() => announced(stack)).toEqual([ON_0, ON_1].sort());

  await go(app, 'usage');
  // The table is read once the Usage page has fetched it (the newest decision is the schedule's end).
  await expect(app.getByTestId('rails-recent').locator('tr[data-code]').first()).toHaveAttribute('data-code', 'gpu_resume_schedule');
  const codes = await app
    .getByTestId('rails-recent')
    .locator('tr[data-code]')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code')));
  expect(codes.slice(0, 6)).toEqual([
    'gpu_resume_schedule',
    'gpu_pause_schedule',
    'gpu_resume_gpu_busy',
    'gpu_resume_given_back',
    'gpu_pause_given_back',
    'gpu_pause_gpu_busy',
  ]);
});
