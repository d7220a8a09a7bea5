// Hub notices, provider status and the catalogue in the browser console, against the real agent and
// dev hub (the hub sends the notice over its WebSocket: POST /dev/notice).
import { expect, go, slug, test } from './support/fixtures';
import { PROVIDER_KEY } from './support/stack';

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('a hub notice shows on the Dashboard with severity, model and time, and survives a reload', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect(app.getByTestId('hub-notices-empty')).toBeVisible();
  const res = await post(`${stack.hubUrl}/dev/notice`, {
    event: 'traffic_withheld',
    severity: 'critical',
    model_id: 'Qwen/Qwen2.5-7B-Instruct',
    message: 'Traffic is withheld <b>while</b> your reputation recovers.',
    details: { reputation: '0.41' },
  });
  expect(res.status).toBe(200);
  // A bad one (event name with a line break) is dropped by the agent and never shown.
  await post(`${stack.hubUrl}/dev/notice`, { event: 'evil\r\nBcc: x', severity: 'critical', message: 'should not show' });

  const notice = app.getByTestId('hub-notice');
  await expect(notice).toHaveCount(1);
  await expect(notice).toHaveAttribute('data-severity', 'critical');
  await expect(notice.getByTestId('hub-notice-severity')).toHaveText('critical');
  await expect(notice.getByTestId('hub-notice-model')).toHaveText('Qwen/Qwen2.5-7B-Instruct');
  await expect(notice.getByTestId('hub-notice-time')).toHaveAttribute('datetime', /^\d{4}-\d\d-\d\dT/);
  // The hub's text is shown as text, never as markup.
  await expect(notice.getByTestId('hub-notice-message')).toHaveText('Traffic is withheld <b>while</b> your reputation recovers.');
  await expect(notice.locator('b')).toHaveCount(0);
  await expect(notice).toContainText('0.41');

  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.getByTestId('hub-notice')).toHaveCount(1);
  await expect(app.getByTestId('hub-notice').getByTestId('hub-notice-message')).toContainText('Traffic is withheld');
});

test('the provider status card shows the platform status, and a pending provider with its next steps', async ({ app, stack }) => {
  const card = app.getByTestId('provider-status');
  await expect(card.getByTestId('provider-status-state')).toHaveText('Can connect');
  await expect(card.getByTestId('provider-status-status')).toHaveText('active');
  await expect(card.getByTestId('provider-status-step')).toHaveText('Registration on the network: Active (4 of 4)');

  expect((await post(`${stack.hubUrl}/dev/status`, { key: PROVIDER_KEY, status: 'pending' })).status).toBe(200);
  await card.getByTestId('provider-status-refresh').click();
  await expect(card.getByTestId('provider-status-state')).toHaveText('Waiting for approval');
  await expect(card.getByTestId('provider-status-status')).toHaveText('pending');
  await expect(card.getByTestId('provider-status-step')).toHaveText('Registration on the network: Request approval (1 of 4)');
  await expect(card.getByTestId('provider-status-why')).toContainText('checks again every minute');
  await expect(card.getByTestId('provider-status-warning')).toBeVisible();
  await expect(card.getByTestId('provider-status-next-steps').locator('li')).toHaveCount(3);
});

test('a model the catalogue does not know is marked; no catalogue id is offered on a bare name likeness', async ({ app, stack }) => {
  const [known, other] = stack.engine.models as [string, string];
  const unknown = 'my-finetune';
  stack.writeModels({
    [known]: { endpoint: stack.engine.url },
    [other]: { endpoint: stack.engine.url },
    [unknown]: { endpoint: stack.engine.url, local_model: 'my-finetune-q4' },
  });
  await expect(app.getByTestId(`model-row-${slug(unknown)}`)).toBeVisible();
  await expect(app.getByTestId(`catalogue-unknown-${slug(unknown)}`)).toBeVisible();
  await expect(app.getByTestId(`catalogue-unknown-${slug(known)}`)).toHaveCount(0);
  await go(app, 'engines');
  const row = app.getByTestId(`catalogue-row-${slug(unknown)}`);
  await expect(row).toContainText('the network will not route requests for this name');
  await expect(row.getByTestId(`catalogue-suggestion-${slug(unknown)}`)).toHaveCount(0);
  await expect(app.getByTestId(`catalogue-row-${slug(known)}`)).toHaveCount(0);
  await expect(app.getByTestId('catalogue-all-known')).toHaveCount(0);
});
