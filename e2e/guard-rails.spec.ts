// The guard rails in Chromium against the real agent and its real GPU sampler (the stand-in nvidia-smi, its
// temperature read from a file): the owner sets an 85 °C ceiling on Engines & models; the GPU at 90 °C first
// halves what each engine takes at once, then pauses serving with the reason on the Dashboard; back at 70 °C,
// serving resumes by itself. A ceiling out of range is refused where it was typed. The Usage page then says
// how long the rails paused serving today, under its cause only, and lists the decisions with their codes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, go, slug, test } from './support/fixtures';

let tempFile = '';
let plFile = '';
test.use({
  stackOptions: async ({}, use) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-guard-'));
    tempFile = path.join(dir, 'temp');
    plFile = path.join(dir, 'power-limit');
    fs.writeFileSync(tempFile, '60');
    await use({ withKey: true, gpu: true, tokensPerSecond: 40, gpuTemperatureFile: tempFile, gpuPowerLimitFile: plFile });
    fs.rmSync(dir, { recursive: true, force: true });
  },
});

test('a temperature ceiling: hot halves the limit, then pauses with the reason; cool resumes', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  const model = stack.engine.models[0]!;
  await go(app, 'engines');
  await app.getByTestId('guard-temp').fill('200');
  await app.getByTestId('guard-save').click();
  await expect(app.getByTestId('guard-error')).toContainText('110');
  await app.getByTestId('guard-temp').fill('85');
  await app.getByTestId('guard-save').click();
  await expect(app.getByTestId('guard-saved')).toBeVisible();

  const inflight = app.getByTestId(`model-inflight-${slug(model)}`);
  await expect(inflight).toHaveText('0 / 4');
  fs.writeFileSync(tempFile, '90');
  await expect(inflight).toHaveText('0 / 2');
  await go(app, 'dashboard');
  await expect(app.getByTestId('pause-reason')).toContainText('a GPU is over the ceiling you set');
  await expect(app.getByTestId('pause-reason')).toContainText('GPU 0 at 90 °C (ceiling 85 °C)');
  await expect.poll(async () => (await stack.provider())?.models ?? []).toEqual([]);

  fs.writeFileSync(tempFile, '70');
  await expect(app.getByTestId('pause-reason')).toHaveCount(0, { timeout: 30_000 });
  await expect.poll(async () => ((await stack.provider())?.models ?? []).includes(model)).toBe(true);

  await go(app, 'usage');
  const today = app.getByTestId('rails-today');
  await expect(today).toHaveAttribute('data-code', 'rails_paused');
  await expect(today.getByTestId('rails-paused-cause')).toHaveCount(1);
  await expect(today.getByTestId('rails-paused-cause')).toHaveAttribute('data-code', 'gpu_hot');
  await expect(today).toContainText('too hot');
  // Nothing paid was served before the pause here: what it cost is unknown, and no figure is shown.
  await expect(app.getByTestId('rails-today-cost')).toHaveAttribute('data-code', 'rails_cost_unknown');
  await expect(today.getByTestId('rails-throttled-cause')).toHaveAttribute('data-code', 'gpu_hot');
  const codes = await app
    .getByTestId('rails-recent')
    .locator('tr[data-code]')
    .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-code')));
  expect(codes.slice(0, 5)).toEqual(['resume_gpu_hot', 'gpu_cool_resume', 'pause_gpu_hot', 'gpu_hot_pause', 'gpu_hot_throttle']);
});

test("the driver's power limit: set with the owner's consent; refused for want of rights, with the command to run", async ({ app }) => {
  await go(app, 'engines');
  const row = app.getByTestId('power-limit-0');
  await expect(row).toHaveAttribute('data-limit', '350');
  await app.getByTestId('power-limit-input-0').fill('250');
  await app.getByTestId('power-limit-set-0').click();
  // Nothing is changed before the owner confirms.
  await expect(row).toHaveAttribute('data-limit', '350');
  await app.getByTestId('power-limit-confirm-0').click();
  await expect(app.getByTestId('power-limit-outcome-0')).toHaveAttribute('data-code', 'gpu_power_limit_set');
  await expect(row).toHaveAttribute('data-limit', '250');

  fs.writeFileSync(`${plFile}.deny`, '');
  await app.getByTestId('power-limit-input-0').fill('200');
  await app.getByTestId('power-limit-set-0').click();
  await app.getByTestId('power-limit-confirm-0').click();
  await expect(app.getByTestId('power-limit-outcome-0')).toHaveAttribute('data-code', 'needs_admin');
  await expect(app.getByTestId('power-limit-outcome-0')).toContainText('sudo nvidia-smi -i 0 -pl 200');
  await expect(row).toHaveAttribute('data-limit', '250');

  await go(app, 'usage');
  await expect(app.getByTestId('rails-recent').locator('tr[data-code="gpu_power_limit_set"]')).toHaveCount(1);
});
