// The console's access token, CSP and reconnect behaviour, seen from a real browser.
import { expect, test } from './support/fixtures';

test('without the token the console refuses to serve anything', async ({ page, stack }) => {
  const base = new URL(stack.consoleUrl);
  const res = await page.goto(`${base.origin}/`);
  expect(res?.status()).toBe(401);
  await expect(page.locator('body')).toContainText('Access token missing or wrong');
  const wrong = await page.goto(`${base.origin}/?token=not-the-token`);
  expect(wrong?.status()).toBe(401);
});

test('the token becomes a cookie and leaves the address bar; the page is served with a strict CSP', async ({ page, stack }) => {
  const first = page.waitForResponse((r) => r.url().endsWith('/') && r.status() === 200);
  await page.goto(stack.consoleUrl);
  const res = await first;
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
  expect(page.url()).not.toContain('token=');
  const csp = res.headers()['content-security-policy'] ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const cookies = await page.context().cookies();
  expect(cookies).toHaveLength(1);
  expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
  // An inline script injected into the page is blocked by the CSP.
  const violation = page.waitForEvent('console', (m) => /Content Security Policy/.test(m.text()));
  await page.evaluate(`(() => { const s = document.createElement('script'); s.textContent = 'window.injected = true'; document.body.appendChild(s); })()`);
  await violation;
  expect(await page.evaluate<boolean>('window.injected === true')).toBe(false);
});

test('when the agent goes away the page says it is reconnecting; a restarted agent needs its new token', async ({ page, stack }) => {
  await page.goto(stack.consoleUrl);
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(page.getByTestId('reconnect-banner')).toHaveCount(0);
  await stack.stopAgent();
  await expect(page.getByTestId('reconnect-banner')).toContainText('Reconnecting to the agent');
  // Same port, new token: the old cookie is refused and the page says what to do.
  const url = await stack.restartAgent();
  await expect(page.getByTestId('unauthorized-banner')).toContainText('?token=');
  await page.goto(url);
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(page.getByTestId('unauthorized-banner')).toHaveCount(0);
  await expect(page.getByTestId('reconnect-banner')).toHaveCount(0);
  await expect(page.getByTestId('sidebar-link-state')).toContainText('Serving');
});
