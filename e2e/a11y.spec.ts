/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// axe-core on every page of the console: light and dark at one size (what differs between them is colour),
// and light on a narrower screen (what differs there is layout); any violation fails the run. The stack serves real traffic first, so Requests has rows and the Dashboard has data.
// The first-run pages (a fresh agent without a key) are checked in each of their states.
import { axeViolations, describeViolations } from './support/axe';
import { continueFromKey, expect, go, slug, test } from './support/fixtures';
import { PENDING_KEY, PROVIDER_KEY } from './support/stack';

const PAGES = ['dashboard', 'requests', 'usage', 'fleet', 'engines', 'logs', 'settings'] as const;
const CASES = [
  { colorScheme: 'light', viewport: { width: 1280, height: 800 } },
  { colorScheme: 'dark', viewport: { width: 1280, height: 800 } },
  { colorScheme: 'light', viewport: { width: 1024, height: 640 } },
] as const;

for (const { colorScheme, viewport } of CASES) {
  test.describe(`${colorScheme} ${viewport.width}×${viewport.height}`, () => {
    test.use({ colorScheme, viewport });
    test('every page passes axe', async ({ app, stack }) => {
      test.setTimeout(420_000); // axe walks every page's whole DOM (about 10-25 s a page on a busy 2-core machine)
      await expect(app.getByTestId('link-state')).toHaveText('Connected');
      await stack.chat(stack.engine.models[0]!, 8);
      await expect(app.locator('html')).toHaveAttribute('data-theme', colorScheme);
      const report: string[] = [];
      for (const page of PAGES) {
        await go(app, page);
        if (page === 'requests') await expect(app.getByTestId('request-row').first()).toBeVisible();
        if (page === 'logs') await expect(app.getByTestId('log-row').first()).toBeVisible();
        const vs = await axeViolations(app);
        if (vs.length) report.push(describeViolations(page, vs));
      }
      // The per-model page, reached from the share table.
      await go(app, 'dashboard');
      await app.getByTestId('model-link').first().click();
      await expect(app.getByTestId('page-model')).toBeVisible();
      await expect(app.getByTestId('model-requests')).toHaveText('1');
      const modelPage = await axeViolations(app);
      if (modelPage.length) report.push(describeViolations('model', modelPage));
      // A chart's tooltip is a state of the page too (its series names once took the series' colour as text colour).
      const box = (await app.locator('[data-testid="page-model"] .recharts-wrapper').first().boundingBox())!;
      await app.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2);
      await expect(app.locator('.recharts-tooltip-item').first()).toBeVisible();
      const tooltip = await axeViolations(app);
      if (tooltip.length) report.push(describeViolations('model (chart tooltip)', tooltip));
      await app.mouse.move(0, 0);
      // A selected request and an expanded log line are states of their pages too.
      await go(app, 'requests');
      await app.getByTestId('request-row').first().click();
      await expect(app.getByTestId('request-detail')).toBeVisible();
      const detail = await axeViolations(app);
      if (detail.length) report.push(describeViolations('requests (detail open)', detail));
      // The paused Dashboard with its notice on screen (18 contrast nodes were seen there once).
      await go(app, 'dashboard');
      await app.getByTestId('pause-button').click();
      await expect(app.getByTestId('link-state')).toHaveText('Paused');
      await expect(app.locator('.notice').first()).toBeVisible();
      const paused = await axeViolations(app);
      if (paused.length) report.push(describeViolations('dashboard (paused, notice)', paused));
      expect(report.join('\n'), 'axe violations').toBe('');
      // The check can fail: a nameless button put into the page is reported.
      await app.evaluate("document.querySelector('main').append(Object.assign(document.createElement('button'), { id: 'axe-control' }))");
      expect((await axeViolations(app)).map((v) => v.id)).toContain('button-name');
    });
  });
}

for (const { colorScheme, viewport } of CASES) {
  test.describe(`onboarding ${colorScheme} ${viewport.width}×${viewport.height}`, () => {
    test.use({ colorScheme, viewport, stackOptions: { withKey: false, gpu: true, tokensPerSecond: 40 } });
    test('every onboarding state passes axe', async ({ app, stack }) => {
      test.setTimeout(300_000);
      await expect(app.getByTestId('page-onboarding')).toBeVisible();
      await expect(app.locator('html')).toHaveAttribute('data-theme', colorScheme);
      const report: string[] = [];
      const check = async (state: string) => {
        const vs = await axeViolations(app);
        if (vs.length) report.push(describeViolations(`onboarding (${state})`, vs));
      };
      await check('fresh: network');
      await app.getByTestId('network-custom').check();
      await check('network: custom hub');
      await app.getByTestId('network-save').click();
      await expect(app.getByTestId('onboarding-key')).toBeVisible();
      await app.getByTestId('key-input').fill('sk-prov-wrong-0000000');
      await app.getByTestId('key-check').click();
      await expect(app.getByTestId('key-field-error')).toBeVisible();
      await check('key refused');
      await app.getByTestId('key-input').fill(PENDING_KEY);
      await app.getByTestId('key-check').click();
      await expect(app.getByTestId('key-status-badge')).toHaveText('pending');
      await check('key pending review');
      await app.getByTestId('key-input').fill(PROVIDER_KEY);
      await app.getByTestId('key-check').click();
      await expect(app.getByTestId('key-status-badge')).toHaveText('active');
      await check('key valid');
      await continueFromKey(app);
      await expect(app.getByTestId('pick-' + slug(stack.engine.models[0]!))).toBeVisible();
      await check('models to serve');
      await app.getByTestId('serve-continue').click();
      await check('start');
      await app.getByTestId('onboarding-settings').click();
      await expect(app.getByTestId('page-settings')).toBeVisible();
      await check('settings during setup');
      expect(report.join('\n'), 'axe violations').toBe('');
    });
  });
}
