// Test fixtures: a fresh stack per test and a page opened on its console, ready once the first
// snapshot has arrived ([data-app-state="loaded"]). Uncaught page errors and CSP violations fail the test.
import fs from 'node:fs';
import path from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import { ConsoleStack, defaultStackOptions, repoRoot, type StackOptions } from './stack';

export { expect };

export const test = base.extend<{ stackOptions: StackOptions; stack: ConsoleStack; app: Page }>({
  stackOptions: [defaultStackOptions, { option: true }],
  stack: async ({ stackOptions }, use, testInfo) => {
    const stack = await ConsoleStack.start(stackOptions);
    await use(stack);
    if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach('processes.log', { body: stack.logs(), contentType: 'text/plain' });
    await stack.close();
  },
  app: async ({ page, stack }, use) => {
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
    });
    await page.goto(stack.consoleUrl);
    await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
    await use(page);
    expect(problems, 'the page logged errors').toEqual([]);
  },
});

/** The data-testid suffix of a model id (as the renderer writes it). */
export function slug(model: string): string {
  return model.replace(/[^A-Za-z0-9_.-]/g, '_');
}

export async function go(page: Page, name: 'dashboard' | 'requests' | 'usage' | 'engines' | 'logs' | 'settings' | 'fleet'): Promise<void> {
  const nav = page.getByTestId(`nav-${name}`);
  // In a narrow window the pages fold into the top bar's menu.
  if (!(await nav.isVisible())) await page.getByTestId('nav-menu').click();
  await nav.click();
  await expect(page.getByTestId(`page-${name}`)).toBeVisible();
}

/**
 * Step 2 → step 3 of the first run once the key is saved. The agent then dials the hub with it, and a dev hub's
 * "simulated network" banner appears at the top of the page when it connects, moving everything down: a click
 * as it appears lands on whatever was below the button (seen on a busy machine). So the click waits for the
 * banner, and the step is seen to change.
 */
export async function continueFromKey(page: Page): Promise<void> {
  await expect(page.getByTestId('simulated-banner')).toBeVisible();
  await page.getByTestId('key-continue').click();
  await expect(page.getByTestId('onboarding-serve')).toBeVisible();
}

/** `npm run screenshots` sets this; only then are the docs' copies (tracked files) rewritten. */
export const WRITE_DOCS_SCREENSHOTS = process.env.SWAN_SCREENSHOTS === '1';

/**
 * Saves a screenshot as a test artefact (e2e/artifacts, ignored by git), and as the docs' copy
 * (docs/screenshots) only under `npm run screenshots`: an e2e run never rewrites tracked files.
 */
export async function shoot(page: Page, name: string, o: { fullPage?: boolean } = {}): Promise<void> {
  const file = path.join(repoRoot, 'e2e', 'artifacts', `${name}.png`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // No tooltip from wherever the last click left the pointer.
  await page.mouse.move(0, 0);
  if (o.fullPage) {
    // The page scrolls inside <main>: let the document hold it all for the picture, then put it back.
    await page.evaluate("document.querySelector('.app').style.height = 'auto'; document.getElementById('main').style.overflow = 'visible'");
    await page.screenshot({ path: file, animations: 'disabled', caret: 'hide', fullPage: true });
    await page.evaluate("document.querySelector('.app').style.height = ''; document.getElementById('main').style.overflow = ''");
  } else {
    await page.screenshot({ path: file, animations: 'disabled', caret: 'hide' });
  }
  if (WRITE_DOCS_SCREENSHOTS) {
    const docs = path.join(repoRoot, 'docs', 'screenshots');
    fs.mkdirSync(docs, { recursive: true });
    fs.copyFileSync(file, path.join(docs, `${name}.png`));
  }
  await test.info().attach(name, { path: file, contentType: 'image/png' });
}
