// Alerts (a webhook receiver on 127.0.0.1 gets link-down and engine-down, with the cooldown), the
// "Try it" test prompt, and the update check against a local feed — in Chromium, against the real stack.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, go, slug, test } from './support/fixtures';

interface Server {
  url: string;
  bodies: Record<string, unknown>[];
  close(): Promise<void>;
}

async function serve(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void): Promise<Server> {
  const bodies: Record<string, unknown>[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => {
      if (req.method === 'POST') bodies.push(JSON.parse(data) as Record<string, unknown>);
      handler(req, data, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the agent's keep-alive connections: close alone waits for them
      }),
  };
}

const kinds = (s: Server) => s.bodies.map((b) => String(b.kind));

test('alerts: a webhook receives link-down and engine-down, once per kind per cooldown', async ({ app, stack }) => {
  const hook = await serve((_req, _body, res) => res.writeHead(204).end());
  try {
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    await go(app, 'settings');
    const card = app.getByTestId('alerts-card');
    await expect(card.getByTestId('browser-notifications-ask')).toBeVisible();
    await card.getByTestId('input-alertWebhookUrl').fill('https://user:pw@example.com/hook');
    await card.getByTestId('alerts-save').click();
    await expect(card.getByTestId('field-alertWebhookUrl-error')).toContainText('no user name or password');
    await card.getByTestId('input-alertWebhookUrl').fill(`${hook.url}/hook`);
    await card.getByTestId('input-alertCooldownMinutes').fill('30');
    await card.getByTestId('alerts-save').click();
    await expect(card.getByTestId('field-alertWebhookUrl-error')).toHaveCount(0);
    await expect(card.getByTestId('alerts-save')).toBeDisabled();

    await card.getByTestId('alerts-test').click();
    await expect(card.getByTestId('alerts-test-result')).toHaveAttribute('data-result', 'sent');
    await expect.poll(() => kinds(hook)).toEqual(['test']);
    expect(hook.bodies[0]).toMatchObject({
      kind: 'test',
      node: 'e2e-provider',
      content: expect.stringContaining('Test alert'),
      text: expect.stringContaining('Test alert'),
    });

    // The hub goes away, comes back, goes away again: two link_down alerts, one webhook call.
    await stack.stopHub();
    await expect.poll(() => kinds(hook)).toContain('link_down');
    await stack.startHub();
    await expect(app.getByTestId('sidebar-link-state')).toHaveAttribute('data-state', 'connected', { timeout: 30_000 });
    await stack.stopHub();
    await expect(card.locator('[data-testid=recent-alert][data-kind=link_down]')).toHaveCount(2);

    await stack.engine.close();
    await expect.poll(() => kinds(hook), { timeout: 20_000 }).toContain('engine_down');
    expect(String(hook.bodies.find((b) => b.kind === 'engine_down')!.text)).toContain(stack.engine.url);
    await expect(card.locator('[data-testid=recent-alert][data-kind=engine_down]')).toHaveCount(1);
    expect(kinds(hook).filter((k) => k === 'link_down')).toHaveLength(1);
  } finally {
    await hook.close();
  }
});

test('Try it: a test prompt streams its answer with TTFT and tok/s and is listed as a local request', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  await go(app, 'engines');
  const card = app.getByTestId('try-card');
  await card.getByTestId('try-model').selectOption(model);
  await card.getByTestId('try-prompt').fill('Say hello in five words.');
  await card.getByTestId(`try-send-${slug(model)}`).click();
  await expect(card.getByTestId('try-answer')).toHaveAttribute('data-status', 'ok');
  await expect(card.getByTestId('try-text')).toContainText('[simulated]');
  await expect(card.getByTestId('try-ttft')).toHaveText(/^\d+ ms$/);
  await expect(card.getByTestId('try-tps')).toHaveText(/^\d+(\.\d)? tok\/s$/);
  await go(app, 'requests');
  const row = app.locator('[data-testid=request-row][data-status=ok]').first();
  await expect(row).toContainText('local');
  await expect(row).toContainText(model);
  await go(app, 'engines');
  await card.getByTestId('try-prompt').fill('   ');
  await expect(card.getByTestId(`try-send-${slug(model)}`)).toBeDisabled();
});

test('update check: says a newer version is available from a local feed, never downloads', async ({ app }) => {
  let latest = '9.9.9';
  const paths: string[] = [];
  const feed = await serve((req, _body, res) => {
    paths.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'swan-provider-console', 'dist-tags': { latest } }));
  });
  try {
    await go(app, 'settings');
    const card = app.getByTestId('about-card');
    await expect(card.getByTestId('app-version')).toHaveText(/^\d+\.\d+\.\d+/);
    await expect(card.getByTestId('app-build')).toContainText('Node');
    await card.getByTestId('input-updateFeedUrl').fill('file:///etc/passwd');
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('field-updateFeedUrl-error')).toBeVisible();
    await card.getByTestId('input-updateFeedUrl').fill(`${feed.url}/swan-provider-console`);
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-available', 'yes');
    await expect(card.getByTestId('update-latest')).toHaveText('9.9.9');
    latest = '0.1.0';
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-available', 'no');
    expect(paths).toEqual(['/swan-provider-console', '/swan-provider-console']);
  } finally {
    await feed.close();
  }
});

test('Dashboard: the summary line gives the verdict or names what needs attention; speed and share by model', async ({ app, stack }) => {
  const model = stack.engine.models[0]!;
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-tone', 'ok');
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-state', 'serving');
  await stack.chat(model, 8);
  await stack.chat(model, 8);
  await expect.poll(async () => Number(await app.getByTestId('chart-ttft').getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
  await expect.poll(async () => Number(await app.getByTestId('chart-tps').getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
  await expect(app.getByTestId('model-share-row').first()).toContainText(model);
  await expect(app.getByTestId('model-share-row').first()).toContainText('100 %');
  // Its own page: requests, latency, errors and earnings over time, and its newest requests.
  await app.getByTestId('model-share-row').first().getByTestId('model-link').click();
  await expect(app.getByTestId('page-model')).toContainText(model);
  await expect(app.getByTestId('model-requests')).toHaveText('2');
  await expect(app.getByTestId('model-errors')).toHaveText('0');
  await expect(app.getByTestId('model-recent-request')).toHaveCount(2);
  await app.getByTestId('model-span-168').click();
  await expect(app.getByTestId('model-requests')).toHaveText('2');
  await go(app, 'dashboard');
  await app.getByTestId('pause-button').click();
  await expect(app.getByTestId('op-summary').locator('[data-code=paused]')).toBeVisible();
  await app.getByTestId('resume-button').click();
  await stack.engine.close();
  await expect(app.getByTestId('op-summary').locator('[data-code=engine_down]').first()).toBeVisible({ timeout: 20_000 });
  await expect(app.getByTestId('op-summary')).toHaveAttribute('data-tone', 'bad');
});
