// 10,000 requests in the list stay smooth: the renderer (built, served by the console server) is given
// 10,000 rows and a flood of live updates through a stand-in desktop bridge, and frame times are measured
// while the list scrolls. Figures are attached to the test and printed.
import path from 'node:path';
import { expect, test } from '@playwright/test';
import { startConsoleServer, type ConsoleServer } from '../src/core/console/server';
import { repoRoot } from './support/stack';

// Playwright's trace recorder captures a screencast frame and DOM snapshots as the page draws, which on
// software rendering costs about a frame of its own: with it on, this spec measured frame p50 29-37 ms
// (the recorder's cost); with it off, 16.7 ms (the renderer's). Frame timings are measured without it.
test.use({ trace: 'off' });

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

interface Frames {
  p50: number;
  p95: number;
  max: number;
  rows: number;
}

/** Scrolls by `step` px a frame (120: a mouse wheel; 900: a fling) for 150 frames and times each frame. */
const scrollAndMeasure = (step: number) => `(async () => {
  const el = document.querySelector('[data-testid=request-scroll]');
  const frames = [];
  let last = performance.now();
  for (let i = 0; i < 150; i++) {
    el.scrollTop += i < 75 ? ${step} : -${step};
    await new Promise((r) => requestAnimationFrame(r));
    const t = performance.now();
    frames.push(t - last);
    last = t;
  }
  frames.sort((a, b) => a - b);
  return { p50: frames[75], p95: frames[Math.floor(frames.length * 0.95)], max: frames[frames.length - 1], rows: document.querySelectorAll('[data-testid=request-row]').length };
})()`;

test('10,000 requests: the list is virtualised and scrolls smoothly, also under a flood of live updates', async ({ page }) => {
  await page.addInitScript({ path: path.join(repoRoot, 'e2e', 'support', 'fake-bridge.js') });
  const started = Date.now();
  await page.goto(`${server.url}#/requests`);
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(page.getByTestId('request-count')).toHaveText('10,000 of 10,000 requests');
  const loadMs = Date.now() - started;

  const idle = await page.evaluate<Frames>(scrollAndMeasure(120));
  const fling = await page.evaluate<Frames>(scrollAndMeasure(900));
  expect(idle.rows).toBeLessThan(80);

  await page.evaluate('window.__swanScale.startFlood(250)');
  await expect(page.getByTestId('request-count')).toHaveText(/^10,000 of 10,000 requests$/);
  await expect.poll(async () => page.locator('[data-testid=request-row][data-status=running]').count()).toBeGreaterThan(0);
  const busy = await page.evaluate<Frames>(scrollAndMeasure(120));
  await page.evaluate('window.__swanScale.stopFlood()');

  const f = (x: Frames) => `${x.p50.toFixed(1)}/${x.p95.toFixed(1)}/${x.max.toFixed(1)} ms`;
  const figures = `load to 10,000 rows: ${loadMs} ms; frame p50/p95/max while wheel-scrolling ${f(idle)}, while flinging ${f(fling)}, wheel-scrolling under 1,000 new requests/s ${f(busy)}; rows in the DOM ${idle.rows}`;
  console.log(figures);
  test.info().annotations.push({ type: 'figures', description: figures });
  // Software rendering, this spec alone on the machine: the typical frame within one vsync (16.7 ms; a frame
  // that misses one is 33), and the slow ones (p95) within three, while scrolling and under the flood.
  for (const x of [idle, busy, fling]) expect(x.p50).toBeLessThan(20);
  for (const x of [idle, busy, fling]) expect(x.p95).toBeLessThan(50);
  expect(busy.rows).toBeLessThan(80);
});
