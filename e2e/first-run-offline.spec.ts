// A first run with the network unreachable, in Chromium against the real agent: the key cannot be checked,
// the owner is told so in plain words (never Node's "getaddrinfo ENOTFOUND" or "fetch failed") and may save it
// anyway, "checked later"; once the platform answers again the agent checks the key by itself and the step
// shows the platform's word on it.
import { expect } from '@playwright/test';
import { firstRunTest } from './support/first-run';
import { PROVIDER_KEY } from './support/stack';

const test = firstRunTest;
test.use({ networks: ['mainnet'] });

test.slow();

test('the network unreachable: the key saved anyway, checked once the platform is back', async ({ app, first }) => {
  await expect(app.getByTestId('page-onboarding')).toBeVisible();
  await expect(app.getByTestId('network-mainnet')).toBeChecked();
  await app.getByTestId('network-save').click();
  await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
  await expect(app.getByTestId('dashboard-link')).toHaveAttribute('href', 'https://inference.swanchain.io');

  await first.platformDown();
  await app.getByTestId('key-input').fill(PROVIDER_KEY);
  await app.getByTestId('key-check').click();
  const unreachable = app.getByTestId('key-unreachable');
  await expect(unreachable).toContainText('could not be checked');
  await expect(unreachable).not.toContainText(/getaddrinfo|ENOTFOUND|ECONNREFUSED|fetch failed/);
  // Not refused: nothing red next to the field, and nothing saved until the owner says so.
  await expect(app.getByTestId('key-field-error')).toHaveCount(0);
  await expect(app.getByTestId('key-continue')).toBeDisabled();

  await app.getByTestId('key-save-anyway').click();
  await expect(app.getByTestId('key-checked-later')).toBeVisible();
  await expect(app.getByTestId('key-continue')).toBeEnabled();

  // The platform answers again: the agent asks by itself (no click), and the step shows its word.
  await first.platformUp();
  await expect(app.getByTestId('key-status-badge')).toHaveText('active', { timeout: 60_000 });
  expect(first.platform.hits.filter((h) => h.path === '/api/v1/provider/status')).toContainEqual(expect.objectContaining({ auth: `Bearer ${PROVIDER_KEY}` }));
});
