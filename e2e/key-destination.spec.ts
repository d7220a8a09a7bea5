// Settings never sends the saved provider key somewhere new on the page's word: the change is held, the
// page names the host and says where the owner approves it (`swan-provider approve CODE` for a headless
// agent), and it is applied only once the owner has; a plain ws:// address off this machine is marked insecure.
import { expect, go, test } from './support/fixtures';

// Each test starts a whole stack (dev hub, agent, engine) and saves; on a loaded machine that takes
// longer than the default budget.
test.slow();

test("a new hub host waits for the owner's approval, then is applied; a denied one changes nothing", async ({ app, stack }) => {
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await go(app, 'settings');
  const hubUrl = await app.getByTestId('input-hubUrl').inputValue();
  const moved = hubUrl.replace('127.0.0.1', 'localhost');
  const host = new URL(moved).host;

  await app.getByTestId('input-hubUrl').fill(moved);
  await app.getByTestId('settings-save').click();
  const ask = app.getByTestId('key-destination-confirm');
  await expect(ask).toContainText(host);
  // In place beside the hub address, in view: not below the form under its save bar.
  await expect(ask).toBeInViewport();
  await expect(app.getByTestId('key-destination-insecure')).toHaveCount(0);
  await expect(app.getByTestId('settings-saved')).toHaveCount(0);
  const first = (await app.getByTestId('owner-approval-code').textContent())!.replace(/^approve /, '');
  await expect(app.getByTestId('owner-approval-command')).toContainText(`swan-provider approve ${first}`);
  await stack.approve(first, true);
  await expect(app.getByTestId('owner-approval-ended')).toContainText('denied');
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await go(app, 'settings');
  await expect(app.getByTestId('input-hubUrl')).toHaveValue(hubUrl);

  await app.getByTestId('input-hubUrl').fill(moved);
  await app.getByTestId('settings-save').click();
  const code = (await app.getByTestId('owner-approval-code').textContent())!.replace(/^approve /, '');
  expect(code).not.toBe(first);
  await stack.approve(code);
  await expect(app.getByTestId('settings-saved')).toBeVisible();
  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await go(app, 'settings');
  await expect(app.getByTestId('input-hubUrl')).toHaveValue(moved);
  await expect(app.getByTestId('sidebar-link-state')).toContainText('Serving');
});

test('plain ws:// to another machine carries a visible insecure warning', async ({ app }) => {
  await go(app, 'settings');
  await app.getByTestId('input-hubUrl').fill('ws://192.0.2.10:8081');
  await app.getByTestId('settings-save').click();
  await expect(app.getByTestId('key-destination-confirm')).toContainText('192.0.2.10:8081');
  await expect(app.getByTestId('key-destination-insecure')).toContainText('not encrypted');
});
