import { expect, go, shoot, slug, test } from './support/fixtures';
import { PROVIDER_KEY } from './support/stack';

test.use({ stackOptions: { withKey: false, gpu: true, tokensPerSecond: 40 } });

test('first run: the key is checked with the hub, GPUs and models are shown, the chosen models reach the hub', async ({ app, stack }) => {
  const [first, second] = stack.engine.models as [string, string];
  await expect(app.getByTestId('page-onboarding')).toBeVisible();
  await expect(app.locator('nav.sidebar')).toHaveCount(0);
  await expect(app.getByTestId('onboarding-gpus')).toContainText('Simulated NVIDIA GPU (e2e)');
  await expect(app.getByTestId('onboarding-go')).toBeDisabled();
  // Nothing reaches the hub without a key.
  expect(await stack.providers()).toEqual([]);

  // A wrong key is refused with the hub's own words, next to the field.
  await app.getByTestId('key-input').fill('sk-prov-wrong-0000000');
  await app.getByTestId('key-check').click();
  await expect(app.getByTestId('key-field-error')).toContainText('does not accept this key');
  await expect(app.getByTestId('onboarding-go')).toBeDisabled();

  await shoot(app, 'onboarding');

  // The right key is accepted and saved.
  await app.getByTestId('key-input').fill(PROVIDER_KEY);
  await app.getByTestId('key-check').click();
  await expect(app.getByTestId('key-valid')).toBeVisible();
  await expect(app.getByTestId('key-saved')).toBeVisible();

  // Serve only the first model.
  await app.getByTestId(`pick-${slug(second)}`).uncheck();
  await expect(app.getByTestId(`pick-${slug(second)}`)).not.toBeChecked();
  await expect(app.getByTestId(`pick-${slug(first)}`)).toBeChecked();

  await app.getByTestId('onboarding-go').click();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await expect(app.getByTestId('link-state')).toHaveText('Serving');
  await expect.poll(async () => (await stack.provider())?.models).toEqual([first]);

  // The choice survives a reload: no onboarding again.
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await go(app, 'settings');
  await expect(app.getByTestId('field-providerKey')).toContainText('A key is set');
});
