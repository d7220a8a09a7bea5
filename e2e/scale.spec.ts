// 10,000 requests in the list: the renderer (built, served by the console server) is given 10,000 rows and a
// flood of live updates through a stand-in desktop bridge; the list stays virtualised (a few dozen rows in the
// DOM) while it scrolls, also under the flood, and keeps counting. How smooth it scrolls (frame times) is a
// figure of the bench (bench/ui-render.ts), not a check here: frame times on a shared machine measure the machine.
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { startConsoleServer, type ConsoleServer } from '../src/core/console/server';
import { repoRoot } from './support/stack';

let server: ConsoleServer;
test.beforeAll(async () => {
  server = await startConsoleServer({
    backend: {
      invoke: () => Promise.reject(new Error('the scale test uses the stand-in bridge')),
      subscribe: () => () => undefined,
    },
    port: 0,
    staticDir: path.join(repoRoot, 'out', 'renderer'),
  });
});
test.afterAll(async () => {
  await server.close();
});

/**
 * Scrolls the list by `step` px a frame (120: a mouse wheel; 900: a fling) for 60 frames, down then up; the most rows
 * the DOM held. What is checked is a count, not a time: a frame on a loaded machine took 130 ms (a CI run beside a
 * soak), so the loops are short and the test has a slow test's budget.
 */
const scrollAndCount = (step: number) => `(async () => {
  const el = document.querySelector('[data-testid=request-scroll]');
  let most = 0;
  for (let i = 0; i < 60; i++) {
    el.scrollTop += i < 30 ? ${step} : -${step};
    await new Promise((r) => requestAnimationFrame(r));
    most = Math.max(most, document.querySelectorAll('[data-testid=request-row]').length);
  }
  return most;
})()`;

test('10,000 requests: the list is virtualised while it scrolls, also under a flood of live updates', async ({ page }) => {
  test.slow();
  await page.addInitScript({ path: path.join(repoRoot, 'e2e', 'support', 'fake-bridge.js') });
  // The sign-in link's redirect carries its own fragment (the page secret), so the route is taken after it.
  await page.goto(server.url);
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
  await page.evaluate('location.hash = "#/requests"');
  await expect(page.getByTestId('request-count')).toHaveText('10,000 of 10,000 requests');

  expect(await page.evaluate<number>(scrollAndCount(120))).toBeLessThan(80);
  expect(await page.evaluate<number>(scrollAndCount(900))).toBeLessThan(80);

  await page.evaluate('window.__swanScale.startFlood(250)');
  await expect(page.getByTestId('request-count')).toHaveText(/^10,000 of 10,000 requests$/);
  await expect.poll(async () => page.locator('[data-testid=request-row][data-status=running]').count()).toBeGreaterThan(0);
  expect(await page.evaluate<number>(scrollAndCount(120))).toBeLessThan(80);
  await page.evaluate('window.__swanScale.stopFlood()');
});
