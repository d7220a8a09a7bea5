/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Every page at 1280, 800 and 360 px wide (the console is opened on phones): no sideways scroll of the
// page or of any table, nothing cut off at the window's edge (cards, Serve switches, Rescan, buttons),
// chart value labels on one line and inside their chart; the first run's steps too; and at 360 px every
// page passes axe (a11y.spec.ts covers the wide layouts).
import type { Page } from '@playwright/test';
import { axeViolations, describeViolations } from './support/axe';
import { continueFromKey, expect, go, slug, test } from './support/fixtures';
import { PROVIDER_KEY } from './support/stack';

const PAGES = ['dashboard', 'requests', 'usage', 'fleet', 'engines', 'logs', 'settings'] as const;
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 800, height: 900 },
  { width: 360, height: 740 },
];

/**
 * What does not fit, as lines a developer can act on: the page or a table scrolling sideways, an element
 * reaching past the window's edge (unless it sits in one of the lists that scroll by design and is
 * clipped there), a chart label wrapped or cut off.
 */
async function misfits(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const vw = document.documentElement.clientWidth;
    const name = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''}.${String(el.className).split(' ').slice(0, 2).join('.')}`;
    if (document.documentElement.scrollWidth > vw + 1) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${vw}`);
    const main = document.getElementById('main')!;
    if (main.scrollWidth > main.clientWidth + 1) out.push(`the main area scrolls sideways: ${main.scrollWidth} > ${main.clientWidth}`);
    for (const box of document.querySelectorAll('.table-scroll')) {
      if (box.scrollWidth > box.clientWidth + 1)
        out.push(`a table scrolls sideways in its card: ${name(box.querySelector('table')!)} ${box.scrollWidth} > ${box.clientWidth}`);
    }
    // Lists built to scroll inside themselves (virtualised rows, long text), and visually hidden heads.
    const clippedBy = (el: Element) => el.closest('.request-scroll, .log-view, .request-text, .is-stacked thead, .sr-only, .skip-link');
    for (const el of document.querySelectorAll('#root *')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || clippedBy(el)) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || cs.position === 'fixed') continue;
      if (r.right > vw + 1 || r.left < -1) out.push(`${name(el)} reaches past the window: ${Math.round(r.left)}..${Math.round(r.right)} of ${vw}`);
    }
    for (const fig of document.querySelectorAll('figure.chart')) {
      const svg = fig.querySelector('svg.recharts-surface');
      if (!svg) continue;
      const left = svg.getBoundingClientRect().left;
      for (const t of fig.querySelectorAll('.recharts-yAxis .recharts-cartesian-axis-tick-value')) {
        const label = t.textContent ?? '';
        if (t.querySelectorAll('tspan').length > 1) out.push(`${fig.getAttribute('data-testid')}: the axis label "${label}" wraps`);
        if (t.getBoundingClientRect().left < left - 0.5) out.push(`${fig.getAttribute('data-testid')}: the axis label "${label}" is cut off`);
      }
    }
    return out;
  });
}

/** The element is whole inside the window once scrolled to. */
async function expectWhole(page: Page, testId: string): Promise<void> {
  const el = page.getByTestId(testId).first();
  await el.scrollIntoViewIfNeeded();
  const box = await el.boundingBox();
  const vw = await page.evaluate(() => document.documentElement.clientWidth);
  expect(box, testId).not.toBeNull();
  expect(box!.x, `${testId} left edge`).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width, `${testId} right edge`).toBeLessThanOrEqual(vw);
}

for (const viewport of WIDTHS) {
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport });
    test('every page fits: no sideways scroll, nothing cut off, chart labels whole', async ({ app, stack }) => {
      test.setTimeout(240_000);
      await expect(app.getByTestId('link-state')).toHaveText('Connected');
      await Promise.all([stack.chat(stack.engine.models[0]!, 12), stack.chat(stack.engine.models[1]!, 12)]);
      await expect.poll(async () => Number(await app.getByTestId('chart-util-0').getAttribute('data-points'))).toBeGreaterThanOrEqual(3);
      const report: string[] = [];
      for (const p of PAGES) {
        await go(app, p);
        if (p === 'requests') await expect(app.getByTestId('request-row').first()).toBeVisible();
        if (p === 'usage') await expect(app.getByTestId('usage-requests')).toHaveText('2');
        report.push(...(await misfits(app)).map((m) => `${p}: ${m}`));
      }
      // The controls an owner reaches for, whole in the window.
      await go(app, 'dashboard');
      for (const m of stack.engine.models) await expectWhole(app, `model-toggle-${slug(m)}`);
      await expectWhole(app, 'pause-button');
      await go(app, 'engines');
      await expectWhole(app, 'rescan-button');
      await expectWhole(app, 'endpoint-add');
      // A request's detail, and a model's page with its charts.
      await go(app, 'requests');
      await app.getByTestId('request-row').first().click();
      await expect(app.getByTestId('request-detail')).toBeVisible();
      report.push(...(await misfits(app)).map((m) => `request detail: ${m}`));
      await expectWhole(app, 'request-detail-close');
      await app.getByTestId('request-detail-close').click();
      await go(app, 'dashboard');
      await app.getByTestId('model-link').first().click();
      await expect(app.getByTestId('page-model')).toBeVisible();
      await expect(app.getByTestId('model-chart-latency')).toHaveAttribute('data-points', '1');
      report.push(...(await misfits(app)).map((m) => `model page: ${m}`));
      expect(report.join('\n'), 'layout problems').toBe('');
    });
  });
}

test.describe('the first run at 360 px', () => {
  test.use({ viewport: { width: 360, height: 740 }, stackOptions: { withKey: false, gpu: true, tokensPerSecond: 40 } });
  test('every step fits the phone, with its buttons whole', async ({ app }) => {
    test.setTimeout(120_000);
    const report: string[] = [];
    const check = async (step: string) => report.push(...(await misfits(app)).map((m) => `${step}: ${m}`));
    await check('network');
    await app.getByTestId('network-custom').check();
    await check('network, custom');
    await expectWhole(app, 'network-save');
    await app.getByTestId('network-save').click();
    await app.getByTestId('key-input').fill(PROVIDER_KEY);
    await app.getByTestId('key-check').click();
    await expect(app.getByTestId('key-status-badge')).toHaveText('active');
    await check('key');
    await expectWhole(app, 'key-continue');
    await continueFromKey(app);
    await expect(app.getByTestId('onboarding-serve')).toBeVisible();
    await check('engines and models');
    await expectWhole(app, 'rescan-button');
    await expectWhole(app, 'serve-continue');
    await app.getByTestId('serve-continue').click();
    await check('start');
    await expectWhole(app, 'onboarding-go');
    expect(report.join('\n'), 'layout problems').toBe('');
  });
});

test.describe('axe at 360 px', () => {
  test.use({ viewport: { width: 360, height: 740 } });
  test('every page passes axe in the phone layout, the menu open and closed', async ({ app, stack }) => {
    test.setTimeout(420_000); // axe walks every page's whole DOM
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    await stack.chat(stack.engine.models[0]!, 8);
    const report: string[] = [];
    for (const p of PAGES) {
      await go(app, p);
      if (p === 'requests') await expect(app.getByTestId('request-row').first()).toBeVisible();
      const vs = await axeViolations(app);
      if (vs.length) report.push(describeViolations(p, vs));
    }
    await app.getByTestId('nav-menu').click();
    await expect(app.getByTestId('nav-menu')).toHaveAttribute('aria-expanded', 'true');
    const menu = await axeViolations(app);
    if (menu.length) report.push(describeViolations('menu open', menu));
    expect(report.join('\n'), 'axe violations').toBe('');
  });
});
