// Settings asks before the provider key goes to a new host, naming it, and warns when the connection
// would be plain ws:// to another machine; nothing is saved until the owner agrees.
import { expect, go, test } from './support/fixtures';

test('a new hub host is confirmed by name before the key goes there; cancelling keeps the old one', async ({ app }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Serving');
  await go(app, 'settings');
  const hubUrl = await app.getByTestId('input-hubUrl').inputValue();
  const moved = hubUrl.replace('127.0.0.1', 'localhost');
  const host = new URL(moved).host;

  await app.getByTestId('input-hubUrl').fill(moved);
  await app.getByTestId('settings-save').click();
  const ask = app.getByTestId('key-destination-confirm');
  await expect(ask).toContainText(host);
  await expect(app.getByTestId('key-destination-insecure')).toHaveCount(0);
  await expect(app.getByTestId('settings-saved')).toHaveCount(0);
  await app.getByTestId('key-destination-cancel').click();
  await expect(ask).toHaveCount(0);

  await app.getByTestId('settings-save').click();
  await app.getByTestId('key-destination-agree').click();
  await expect(app.getByTestId('settings-saved')).toBeVisible();
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.getByTestId('input-hubUrl')).toHaveValue(moved);
  await expect(app.getByTestId('link-state')).toHaveText('Serving');
});

test('plain ws:// to another machine carries a visible insecure warning', async ({ app }) => {
  await go(app, 'settings');
  await app.getByTestId('input-hubUrl').fill('ws://192.0.2.10:8081');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('key-destination-confirm')).toContainText('192.0.2.10:8081');
  await expect(app.getByTestId('key-destination-insecure')).toContainText('not encrypted');
  await expect(app.getByTestId('key-destination-agree')).toContainText('insecure');
});
