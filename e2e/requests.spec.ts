import { expect, go, test } from './support/fixtures';

test.use({ stackOptions: { withKey: true, gpu: true, tokensPerSecond: 12 } });

test('a request sent through the hub appears live, and its text streams in as it is generated', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await go(app, 'requests');
  await expect(app.getByTestId('request-row')).toHaveCount(0);

  let answered = false;
  const answer = stack.chat(model, 30).then((t) => {
    answered = true;
    return t;
  });
  const row = app.locator('[data-testid=request-row][data-status=running]');
  await expect(row).toHaveCount(1);
  expect(answered, 'the row shows while the request is still running').toBe(false);
  await expect(row).toContainText(model);
  await row.click();
  const text = app.getByTestId('request-text');
  await expect(text).toContainText('[simulated]');
  // Still generating: the text grows while we watch.
  const early = (await text.textContent()) ?? '';
  await expect.poll(async () => ((await text.textContent()) ?? '').length).toBeGreaterThan(early.length);
  expect(answered).toBe(false);

  const full = await answer;
  expect(full.startsWith('[simulated] ')).toBe(true);
  const done = app.locator('[data-testid=request-row][data-status=ok]');
  await expect(done).toHaveCount(1);
  await expect(app.getByTestId('request-detail-status')).toContainText('ok');
  await expect(text).toHaveText(full.trimEnd(), { useInnerText: true });
  await expect(done.getByTestId('request-tokens-out')).toHaveText('30');
});

test('filters narrow the list, and the Escape key closes the detail', async ({ app, stack }) => {
  const [a, b] = stack.engine.models as [string, string];
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await Promise.all([stack.chat(a, 4), stack.chat(b, 4), stack.chat(b, 4)]);
  await go(app, 'requests');
  await expect(app.locator('[data-testid=request-row][data-status=ok]')).toHaveCount(3);
  await app.getByTestId('filter-model').selectOption(b);
  await expect(app.getByTestId('request-row')).toHaveCount(2);
  await expect(app.getByTestId('request-count')).toHaveText('2 of 3 requests');
  await app.getByTestId('filter-status').selectOption('error');
  await expect(app.getByTestId('request-row')).toHaveCount(0);
  await app.getByTestId('filter-status').selectOption('');
  await app.getByTestId('filter-model').selectOption('');
  await app.getByTestId('filter-search').fill(a.slice(0, 14));
  await expect(app.getByTestId('request-row')).toHaveCount(1);
  await app.getByTestId('request-row').click();
  await expect(app.getByTestId('request-detail')).toBeVisible();
  await app.keyboard.press('Escape');
  await expect(app.getByTestId('request-detail')).toHaveCount(0);
});
