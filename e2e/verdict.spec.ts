// The agent's one verdict on the Dashboard banner and the sidebar badge, for each state: serving and
// routable, serving but not routable (a model the catalogue does not list), not earning, degraded (the
// engine died: the model stays in the table, shown down, and nobody is told to "start an engine"), and
// stopped (paused; the agent itself stopped).
import { expect, slug, test } from './support/fixtures';

test('serving and routable: the banner says routed and earning, the sidebar a green Serving', async ({ app }) => {
  const banner = app.getByTestId('op-summary');
  await expect(banner).toHaveAttribute('data-state', 'serving');
  await expect(banner).toHaveAttribute('data-tone', 'ok');
  await expect(app.getByTestId('verdict-headline')).toHaveText('Serving 2 models to a simulated network (a dev hub): routed and earning.');
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Serving');
  await expect(app.getByTestId('sidebar-link-state')).toHaveAttribute('data-verdict', 'serving');
});

test('serving but not routable: a model the catalogue does not list is named, with what to do', async ({ app, stack }) => {
  const [first, second] = stack.engine.models as [string, string];
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  stack.writeModels({
    [first]: { endpoint: stack.engine.url },
    [second]: { endpoint: stack.engine.url },
    'my-finetune': { endpoint: stack.engine.url, local_model: first },
  });
  const banner = app.getByTestId('op-summary');
  await expect(banner).toHaveAttribute('data-state', 'not_routable');
  const item = banner.locator('[data-code=not_in_catalogue]');
  await expect(item).toContainText("my-finetune is not in the network's catalogue");
  await expect(item.locator('.op-next')).not.toBeEmpty();
  await expect(app.getByTestId('verdict-headline')).toContainText(`Serving ${[first, second].sort().join(', ')}.`);
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Not routed');
  await expect(app.getByTestId(`catalogue-unknown-${slug('my-finetune')}`)).toBeVisible();
});

test.describe('a dev hub that does not pay', () => {
  test.use({ stackOptions: { withKey: true, gpu: false, tokensPerSecond: 40, earnings: false } });
  test('not earning: the banner says so and what to do; the sidebar is not a green Serving', async ({ app }) => {
    const banner = app.getByTestId('op-summary');
    await expect(banner).toHaveAttribute('data-state', 'not_earning');
    await expect(banner).toHaveAttribute('data-tone', 'warn');
    const item = banner.locator('[data-code=earnings_disabled]');
    await expect(item).toContainText('Earnings are not enabled for this provider');
    await expect(item.locator('.op-next')).not.toBeEmpty();
    await expect(app.getByTestId('sidebar-link-state')).toHaveText('Not earning');
  });
});

test('degraded: the engine dies; the model stays in the table, shown down with the reason, and the owner is not told to start one', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  await stack.engine.close();
  const banner = app.getByTestId('op-summary');
  await expect(banner).toHaveAttribute('data-state', 'degraded', { timeout: 20_000 });
  await expect(banner).toHaveAttribute('data-tone', 'bad');
  await expect(banner.locator('[data-code=engine_down]').first()).toContainText(stack.engine.url);
  await expect(banner).not.toContainText('No model');
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Engine down');
  await expect(app.getByTestId(`model-row-${slug(model)}`)).toBeVisible();
  await expect(app.getByTestId(`model-trouble-${slug(model)}`)).toHaveAttribute('data-condition', 'down');
  await expect(app.getByTestId(`model-trouble-${slug(model)}`)).toContainText('engine not running');
});

test('stopped: paused by the owner, then the agent itself stopped', async ({ app, stack }) => {
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  await app.getByTestId('pause-button').click();
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'stopped');
  await expect(app.getByTestId('op-summary').locator('[data-code=paused]')).toBeVisible();
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Paused');
  await app.getByTestId('resume-button').click();
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  await stack.stopAgent();
  await expect(app.getByTestId('op-summary').locator('[data-code=agent_stopped]')).toBeVisible({ timeout: 20_000 });
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-tone', 'bad');
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Agent not reachable');
});

// Issue 40: the console says only what is true. The Connection card shows the link; the verdict owns "Serving".
test.describe('a ServiceURL whose catalogue answers 404', () => {
  test.use({ stackOptions: { withKey: true, gpu: false, tokensPerSecond: 40, platform: { historyHoursAgo: 30 } } });
  test('routing is unknown, not "routed and earning"; the link card says Connected, never Serving', async ({ app }) => {
    const banner = app.getByTestId('op-summary');
    await expect(banner).toHaveAttribute('data-state', 'unknown');
    await expect(banner).toHaveAttribute('data-tone', 'warn');
    await expect(banner.locator('[data-code=routing_unknown]')).toContainText('HTTP 404');
    await expect(banner.locator('[data-code=routing_unknown] .op-next')).not.toBeEmpty();
    await expect(banner).not.toContainText('routed and earning');
    await expect(banner).not.toContainText('Serving');
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    await expect(app.getByTestId('sidebar-link-state')).toHaveText('Routing unknown');
    await expect(app.getByTestId('sidebar-link-state')).toHaveAttribute('data-verdict', 'unknown');
  });
});

test('a "reputation dropped" notice takes the verdict off green; the headline names no failing model', async ({ app, stack }) => {
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  const res = await fetch(`${stack.hubUrl}/dev/notice`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ event: 'reputation_dropped', severity: 'warning', message: 'Reputation fell to 0.41 after failed requests.' }),
  });
  expect(res.status).toBe(200);
  const banner = app.getByTestId('op-summary');
  await expect(banner).toHaveAttribute('data-state', 'not_routable');
  await expect(banner).toHaveAttribute('data-tone', 'warn');
  await expect(banner.locator('[data-code=reputation_low]')).toContainText('0.41');
  await expect(app.getByTestId('sidebar-link-state')).toHaveText('Reputation low');
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
});
