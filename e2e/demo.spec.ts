// `swan-provider demo` as a newcomer runs it: every page says the network and its money are simulated,
// the Dashboard never claims to serve the Swan network, and the demo shows what earning looks like.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { CONSOLE_LINE, startCli } from './support/stack';

test('the demo: a "simulated network, simulated money" banner on every page, earnings shown, never "to the Swan network"', async ({ page }) => {
  test.slow();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-demo-'));
  const env: NodeJS.ProcessEnv = { ...process.env, CP_PATH: path.join(home, 'no-go-provider') };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  const demo = startCli('demo', ['demo', '--home', home, '--console', '127.0.0.1:0'], env);
  try {
    const [, url] = await demo.waitForLine(CONSOLE_LINE, 60_000);
    await page.goto(url!);
    await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
    await expect(page.getByTestId('page-dashboard')).toBeVisible();
    const banner = page.getByTestId('simulated-banner');
    await expect(banner).toContainText('Simulated network, simulated money.');
    for (const p of ['requests', 'usage', 'engines', 'settings'] as const) {
      await page.getByTestId(`nav-${p}`).click();
      await expect(page.getByTestId(`page-${p}`)).toBeVisible();
      await expect(banner).toBeVisible();
    }
    await page.getByTestId('nav-dashboard').click();
    await expect(page.getByTestId('op-summary')).not.toContainText('Swan network');
    // The demo's traffic is paid in simulated money, so the Dashboard shows an amount, not a reason.
    await expect(page.getByTestId('today-earnings')).toHaveAttribute('data-reason', '', { timeout: 30_000 });
    await expect(page.getByTestId('today-earnings')).toHaveText(/^\$\d/);
  } finally {
    await demo.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
});
