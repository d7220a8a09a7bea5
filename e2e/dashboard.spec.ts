import { expect, slug, test } from './support/fixtures';

test('GPU and host charts receive live points with units, in every window', async ({ app }) => {
  await expect(app.getByTestId('gpu-panel-0')).toContainText('Simulated NVIDIA GPU (e2e)');
  for (const id of ['chart-util-0', 'chart-vram-0', 'chart-temp-0', 'chart-power-0', 'chart-cpu', 'chart-ram']) {
    await expect.poll(async () => Number(await app.getByTestId(id).getAttribute('data-points')), { message: `${id} gets points` }).toBeGreaterThanOrEqual(3);
  }
  await expect(app.getByTestId('chart-util-0-value')).toHaveText(/^\d+ %$/);
  await expect(app.getByTestId('chart-vram-0-value')).toHaveText(/^\d+(\.\d)? GB$/);
  await expect(app.getByTestId('chart-temp-0-value')).toHaveText(/^\d+ °C$/);
  await expect(app.getByTestId('chart-power-0-value')).toHaveText(/^\d+ W$/);
  // Axes carry units and a time scale.
  await expect(app.getByTestId('chart-util-0').locator('.recharts-yAxis-tick-labels')).toContainText('100 %');
  await expect(app.getByTestId('chart-temp-0').locator('.recharts-yAxis-tick-labels')).toContainText('°C');
  await expect(app.getByTestId('chart-util-0').locator('.recharts-xAxis-tick-labels .recharts-cartesian-axis-tick-label').first()).toHaveText(/^\d\d:\d\d/);
  const before = Number(await app.getByTestId('chart-util-0').getAttribute('data-points'));
  await expect.poll(async () => Number(await app.getByTestId('chart-util-0').getAttribute('data-points'))).toBeGreaterThan(before);

  await app.getByTestId('window-60').click();
  await expect(app.getByTestId('window-60')).toHaveAttribute('aria-pressed', 'true');
  expect(Number(await app.getByTestId('chart-util-0').getAttribute('data-points'))).toBeGreaterThanOrEqual(before);
});

test.describe('without a GPU', () => {
  test.use({ stackOptions: { withKey: true, gpu: false, tokensPerSecond: 40 } });
  test('explains that no GPU was found and still charts the host', async ({ app }) => {
    await expect(app.getByTestId('no-gpu')).toContainText('No GPU found');
    await expect(app.getByTestId('gpu-panel-0')).toHaveCount(0);
    await expect.poll(async () => Number(await app.getByTestId('chart-cpu').getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  });
});

test('the speed charts say why they are empty: nothing finished yet, then never "no finished requests" beside a finished one', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  const charts = ['chart-queue', 'chart-ttft', 'chart-tps'];
  for (const id of charts) await expect(app.getByTestId(id).locator('[data-empty]')).toHaveAttribute('data-empty', 'no_finished_requests');
  // A whole (not streamed) answer: each chart either has its point or says what the finished request lacks.
  await stack.chat(model, 8, { stream: false });
  await expect.poll(async () => Number(await app.getByTestId('chart-ttft').getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
  for (const id of charts) {
    const chart = app.getByTestId(id);
    if (Number(await chart.getAttribute('data-points')) > 0) continue;
    await expect(chart.locator('[data-empty]')).toHaveAttribute('data-empty', 'none_measured');
    await expect(chart).toContainText('1 request finished');
  }
});

test('a model toggle reaches the hub as a new register', async ({ app, stack }) => {
  const [first, second] = stack.engine.models as [string, string];
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect.poll(async () => (await stack.provider())?.models.sort()).toEqual([first, second].sort());
  const registersBefore = (await stack.provider())!.registers;

  const toggle = app.getByTestId(`model-toggle-${slug(second)}`);
  await expect(toggle).toBeChecked();
  await toggle.uncheck();
  await expect(toggle).not.toBeChecked();
  await expect(app.getByTestId(`model-row-${slug(second)}`)).toHaveAttribute('data-enabled', 'false');
  await expect.poll(async () => (await stack.provider())?.models).toEqual([first]);
  expect((await stack.provider())!.registers).toBeGreaterThan(registersBefore);

  await toggle.check();
  await expect.poll(async () => (await stack.provider())?.models.sort()).toEqual([first, second].sort());
});

test('pause and resume: the hub stops and restarts getting our models', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect.poll(async () => (await stack.provider())?.models.length).toBe(2);

  await app.getByTestId('pause-button').click();
  await expect(app.getByTestId('link-state')).toHaveText('Paused');
  await expect(app.getByTestId('pause-reason')).toContainText('paused by you');
  await expect(app.getByTestId('sidebar-link-state')).toContainText('Paused');
  await expect.poll(async () => (await stack.provider())?.models).toEqual([]);

  await app.getByTestId('resume-button').click();
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect(app.getByTestId('pause-button')).toBeVisible();
  await expect.poll(async () => (await stack.provider())?.models.length).toBe(2);
});
