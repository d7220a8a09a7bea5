// Earnings you can trust, in the browser console against the real agent, the dev hub and a stand-in
// of the platform API: the Usage page shows the platform's totals beside the local ledger with the
// difference explained, what you keep after power at the owner's electricity price, and the
// projection with its assumptions. The Dashboard's Today card says why earnings are zero.
import { expect, go, shoot, test } from './support/fixtures';
import { defaultStackOptions } from './support/stack';

test.describe('with the platform API', () => {
  test.use({ stackOptions: { ...defaultStackOptions, platform: { historyHoursAgo: 3 } } });

  test('usage: platform totals, local totals, the difference, net earnings and the projection @screenshots', async ({ app, stack }) => {
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    const model = stack.engine.models[0]!;
    await go(app, 'usage');
    await expect(app.getByTestId('keep-card')).toBeVisible();
    await app.getByTestId('electricity-price').fill('0.30');
    await app.getByTestId('electricity-save').click();
    await expect(app.getByTestId('projection-assumptions')).not.toContainText('No electricity price is set');
    await stack.chat(model, 40);
    await stack.chat(model, 40);
    await app.getByTestId('usage-refresh').click();

    // Side by side: the platform's record (stand-in: 120 requests, 97.5 % uptime) and this ledger (1 + 2).
    await expect(app.getByTestId('platform-requests')).toHaveText('120');
    await expect(app.getByTestId('local-requests')).toHaveText('3');
    await expect(app.getByTestId('diff-requests')).toHaveText('+117');
    await expect(app.getByTestId('platform-earnings')).toHaveText('$0.4321');
    await expect(app.getByTestId('platform-uptime')).toHaveText(/^97\.5\s?%$/);
    await expect(app.getByTestId('difference-reasons').locator('li[data-code="ledger_age"]')).toBeVisible();
    await expect(app.getByTestId('difference-reasons').locator('li[data-code="failed"]')).toContainText('3 failed');
    await expect(app.getByTestId('platform-asof')).toContainText('as of');

    // What you keep: earnings − power cost = net, and the projection with its assumptions in words.
    await expect(app.getByTestId('keep-earnings')).toHaveText(/^\$0\.01\d+/);
    await expect(app.getByTestId('keep-net')).toHaveText(/^-?\$\d/);
    await expect(app.getByTestId('projection-day')).toHaveText(/\/day$/);
    await expect(app.getByTestId('projection-month')).toHaveText(/\/month$/);
    await expect(app.getByTestId('projection-assumptions').locator('li')).toHaveCount(4);
    await expect(app.getByTestId('usage-net')).toHaveText(/\$/);

    // The rate's source per model: the network pays the first model.
    await expect(app.getByTestId('pricing-table').locator(`tr[data-source="network"]`)).toContainText(model);
    await expect(app.getByTestId('rates-asof')).toContainText('as of');
    // Charts: money with a legend, never an empty axis.
    await expect(app.getByTestId('usage-earnings-chart')).toHaveAttribute('data-empty', 'false');
    await expect(app.getByTestId('usage-earnings-chart').getByTestId('chart-legend')).toContainText('Power cost');
    await expect(app.getByTestId('usage-tokens-chart').getByTestId('chart-legend')).toContainText('Tokens out');
    // Demand: what the network pays for, beside what this machine serves.
    await expect(app.getByTestId('demand-table').locator('tr[data-here="serving"]')).toContainText(model);
    await app.setViewportSize({ width: 1280, height: 3000 });
    await shoot(app, 'usage-earnings');
  });
});

test.describe("the network's records", () => {
  test.use({ stackOptions: { ...defaultStackOptions, platform: { historyHoursAgo: 3 } } });

  test('per model what the platform holds beside this machine, settled earnings beside the local estimate with the difference explained', async ({
    app,
    stack,
  }) => {
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    await go(app, 'usage');
    const card = app.getByTestId('network-records');
    // The stand-in's platform: one offered model with 9 recent failures and 3 dispatch failures, one history row.
    const offered = card.locator('tr[data-model="openai/gpt-5.4"]');
    await expect(offered).toHaveAttribute('data-offered', 'yes');
    await expect(offered.getByTestId('network-recent-failures')).toHaveText('9');
    await expect(offered.getByTestId('network-dispatch-failures')).toHaveText('3');
    await expect(card.locator('tr[data-model="legacy/model"]')).toHaveAttribute('data-offered', 'no');
    // This machine announces its engine's model, which the platform does not hold as offered.
    await expect(card.getByTestId('network-not-listed')).toContainText(stack.engine.models[0]!);
    await expect(card.getByTestId('settled-total')).toHaveText('$0.4321');
    await expect(card.getByTestId('settled-subscription')).toHaveText('$0.10');
    await expect(card.getByTestId('settled-explanation')).toContainText('subscription revenue');
    await expect(card.getByTestId('settled-explanation')).toContainText('2026-11 is not final yet');

    // A platform that cannot answer: said, with the local estimate, never zeros dressed as records.
    stack.platform!.routes['/api/v1/providers/p1/models/details'] = { kind: 'status', status: 404 };
    stack.platform!.routes['/api/v1/provider/me/earnings/history'] = { kind: 'status', status: 404 };
    await app.getByTestId('usage-refresh').click();
    await expect(card.getByTestId('network-models-error')).toContainText('HTTP 404');
    await expect(card.getByTestId('settled-error')).toContainText('HTTP 404');
  });
});

test('dashboard: Today says why earnings are zero instead of $0.00', async ({ app }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  const today = app.getByTestId('today-earnings');
  await expect(today).toHaveAttribute('data-reason', /^(earnings_disabled|no_priced_model|no_requests)$/);
  await expect(today).not.toHaveText('$0.00');
});
