import { expect, go, test } from './support/fixtures';
import { NETWORKS } from '../src/shared/networks';

test('invalid settings are refused with a message next to each field; valid ones reach the hub', async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await go(app, 'settings');
  const hubUrl = await app.getByTestId('input-hubUrl').inputValue();
  expect(hubUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
  // The hint's mainnet address is the real one (src/shared/networks.ts).
  await expect(app.getByTestId('field-hubUrl')).toContainText(NETWORKS.mainnet.hubUrl);
  await expect(app.getByTestId('field-providerKey')).not.toContainText('(not set)');

  await app.getByTestId('input-hubUrl').fill('http://not-a-websocket');
  await app.getByTestId('input-nodeName').fill('bad/name!');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('field-hubUrl-error')).toContainText('ws://');
  await expect(app.getByTestId('field-nodeName-error')).toContainText('letters, digits');
  await expect(app.getByTestId('settings-invalid')).toBeVisible();
  await expect(app.getByTestId('settings-saved')).toHaveCount(0);
  await expect(app.getByTestId('input-hubUrl')).toHaveAttribute('aria-describedby', /err/);

  // Refused means unchanged: the agent still has the old values.
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.getByTestId('input-hubUrl')).toHaveValue(hubUrl);
  await expect(app.getByTestId('input-nodeName')).toHaveValue('e2e-provider');

  await app.getByTestId('input-retentionDays').fill('a year');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('field-retentionDays-error')).toContainText('whole number');
  await app.getByTestId('input-retentionDays').fill('0');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('field-retentionDays-error')).toContainText('1 to 3650');
  await app.getByTestId('input-retentionDays').fill('90');

  await app.getByTestId('input-nodeName').fill('e2e-renamed');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('settings-saved')).toBeVisible();
  await expect(app.getByTestId('field-nodeName-error')).toHaveCount(0);
  await expect.poll(async () => (await stack.providers()).map((p) => p.nodeName)).toContain('e2e-renamed');
  await expect(app.getByTestId('sidebar-link-state').locator('..')).toContainText('e2e-renamed');
});

test('the theme setting applies at once and is kept', async ({ app }) => {
  await go(app, 'settings');
  await app.getByTestId('input-theme').selectOption('dark');
  await expect(app.locator('html')).toHaveAttribute('data-theme', 'dark');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('settings-saved')).toBeVisible();
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.locator('html')).toHaveAttribute('data-theme', 'dark');
  const bg = await app.evaluate<string>('getComputedStyle(document.body).backgroundColor');
  expect(bg).toBe('rgb(17, 20, 24)');
});

test('gateway keys: created once-visible after the owner approved, listed, revoked', async ({ app, stack }) => {
  await go(app, 'settings');
  await app.getByTestId('gateway-key-name').fill('my laptop');
  await app.getByTestId('gateway-key-create').click();
  await expect(app.getByTestId('gateway-key-name-field-error')).toContainText('letters, digits');
  await app.getByTestId('gateway-key-name').fill('laptop');
  await app.getByTestId('gateway-key-create').click();
  await expect(app.getByTestId('gateway-key')).toHaveCount(0);
  await stack.approve((await app.getByTestId('owner-approval-code').textContent())!.replace(/^approve /, ''));
  await expect(app.getByTestId('gateway-key-created')).toContainText('laptop');
  await expect(app.getByTestId('gateway-key')).toHaveCount(1);
  await app.getByRole('button', { name: 'Revoke key laptop' }).click();
  await expect(app.getByTestId('gateway-key')).toHaveCount(0);
});

test('fleet tokens: made once-visible only after the owner approved outside the console, listed, revoked', async ({ app, stack }) => {
  await go(app, 'fleet');
  await app.getByTestId('fleet-token-name').fill('office-pc');
  await app.getByTestId('fleet-token-create').click();
  await expect(app.getByTestId('owner-approval-code')).toBeVisible();
  await expect(app.getByTestId('fleet-token')).toHaveCount(0);
  await stack.approve((await app.getByTestId('owner-approval-code').textContent())!.replace(/^approve /, ''));
  await expect(app.getByTestId('fleet-token-value')).toHaveText(/^\S{20,}$/);
  await expect(app.getByTestId('fleet-token')).toHaveCount(1);
  await app.getByRole('button', { name: 'Revoke the fleet token office-pc' }).click();
  await expect(app.getByTestId('fleet-token')).toHaveCount(0);
  await expect(app.getByTestId('fleet-token-made')).toHaveCount(0);
});
