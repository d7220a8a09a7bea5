// Usage, engines and logs pages against the real ledger and log, and a screenshot of every page.
import fs from 'node:fs';
import { expect, go, shoot, slug, test } from './support/fixtures';

test('usage: totals and charts from the ledger, CSV export downloads a file', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await stack.chat(stack.engine.models[0]!, 6);
  await stack.chat(stack.engine.models[1]!, 6);
  await go(app, 'usage');
  await expect(app.getByTestId('usage-requests')).toHaveText('2');
  await expect(app.getByTestId('usage-tokens-out')).toHaveText('12');
  await expect(app.getByTestId('usage-per-model').locator('tbody tr')).toHaveCount(2);
  await expect.poll(async () => Number(await app.getByTestId('usage-earnings-chart').getAttribute('data-points'))).toBeGreaterThan(0);
  const [download] = await Promise.all([app.waitForEvent('download'), app.getByTestId('usage-export').click()]);
  expect(download.suggestedFilename()).toMatch(/^swan-usage-.*\.csv$/);
  const csv = fs.readFileSync((await download.path())!, 'utf8');
  const lines = csv.trim().split('\n');
  expect(lines).toHaveLength(3);
  expect(csv).toContain(stack.engine.models[1]!);
});

test('engines: limits are saved, an unreachable endpoint is explained', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  await go(app, 'engines');
  await expect(app.getByTestId('engines-models-card')).toContainText(model);
  await app.getByTestId(`limit-concurrent-${slug(model)}`).fill('2');
  await app.getByTestId(`limit-queue-${slug(model)}`).fill('5');
  await app.getByTestId(`limit-save-${slug(model)}`).click();
  await expect(app.getByTestId(`model-inflight-${slug(model)}`).first()).toHaveText('0 / 2');
  await app.getByTestId(`limit-concurrent-${slug(model)}`).fill('0');
  await app.getByTestId(`limit-save-${slug(model)}`).click();
  await expect(app.getByTestId(`limit-error-${slug(model)}`)).toContainText('1 to 1024');

  await app.getByTestId('endpoint-url').fill('ftp://example');
  await app.getByTestId('endpoint-add').click();
  await expect(app.getByTestId('add-endpoint-form')).toContainText(/http:\/\/ or https:\/\/|valid URL/);
});

test('logs: level filter and the support bundle', async ({ app, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  // A refused call leaves a warning in the agent's log.
  await go(app, 'engines');
  await app.getByTestId('endpoint-url').fill('ftp://example');
  await app.getByTestId('endpoint-add').click();
  await expect(app.getByTestId('add-endpoint-form')).toContainText('http://');
  await go(app, 'logs');
  await expect(app.locator('[data-testid=log-row][data-level=info]').first()).toBeVisible();
  await app.getByTestId('log-level').selectOption('warn');
  await expect(app.getByTestId('log-list')).toHaveAttribute('data-level', 'warn');
  await expect(app.locator('[data-testid=log-row][data-level=warn]').filter({ hasText: 'engines.addEndpoint' })).toHaveCount(1);
  await expect(app.locator('[data-testid=log-row][data-level=info]')).toHaveCount(0);
  await app.getByTestId('log-search').fill('addEndpoint');
  await expect(app.getByTestId('log-row')).toHaveCount(1);

  await app.getByTestId('copy-bundle').click();
  await expect(app.getByTestId('bundle-copied')).toBeVisible();
  const bundle = JSON.parse(await app.evaluate<string>('navigator.clipboard.readText()')) as { version: string; models: unknown[] };
  expect(bundle.version).toMatch(/^\d+\.\d+\.\d+/);
  expect(bundle.models).toHaveLength(2);
  expect(JSON.stringify(bundle)).not.toContain('sk-prov-e2e-0123456789');
});

test('screenshots of every page, at 1280 and 360 px @screenshots', async ({ app, stack }) => {
  test.setTimeout(180_000);
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  const [a, b] = stack.engine.models as [string, string];
  await Promise.all([stack.chat(a, 24), stack.chat(b, 24), stack.chat(a, 24)]);
  await expect.poll(async () => Number(await app.getByTestId('chart-util-0').getAttribute('data-points'))).toBeGreaterThanOrEqual(5);
  // Every page, wide (the window as it opens) and on a phone (the whole page, as it scrolls).
  for (const [width, height, suffix, fullPage] of [
    [1280, 800, '', false],
    [360, 740, '-360', true],
  ] as const) {
    await app.setViewportSize({ width, height });
    await go(app, 'dashboard');
    await shoot(app, `dashboard${suffix}`, { fullPage });
    await go(app, 'requests');
    await app.getByTestId('request-row').first().click();
    await expect(app.getByTestId('request-text')).toContainText('[simulated]');
    await shoot(app, `requests${suffix}`, { fullPage });
    await app.getByTestId('request-detail-close').click();
    await go(app, 'usage');
    await expect(app.getByTestId('usage-requests')).toHaveText('3');
    await shoot(app, `usage${suffix}`, { fullPage });
    await go(app, 'fleet');
    await shoot(app, `fleet${suffix}`, { fullPage });
    await go(app, 'engines');
    await shoot(app, `engines${suffix}`, { fullPage });
    await go(app, 'logs');
    await expect(app.getByTestId('log-row').first()).toBeVisible();
    await shoot(app, `logs${suffix}`, { fullPage });
    await go(app, 'settings');
    await shoot(app, `settings${suffix}`, { fullPage });
    await go(app, 'dashboard');
    await app.getByTestId('model-link').first().click();
    await expect(app.getByTestId('page-model')).toBeVisible();
    await shoot(app, `model${suffix}`, { fullPage });
  }
  await app.setViewportSize({ width: 1280, height: 800 });
  await app.emulateMedia({ colorScheme: 'dark' });
  await go(app, 'dashboard');
  await shoot(app, 'dashboard-dark');
  await app.setViewportSize({ width: 1024, height: 640 });
  await shoot(app, 'dashboard-1024x640');
});
