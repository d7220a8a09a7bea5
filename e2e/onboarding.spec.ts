// First run in the browser console, against the real agent and the dev hub's provider-status API, one
// step at a time: 1 network (with its addresses), 2 the key (a pending key shows its status and next
// steps; a valid key connects), 3 engines and models with a Serve switch each, 4 start. Settings are
// reachable throughout. (Each network from an empty home: first-run-networks.spec.ts.)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { continueFromKey, expect, go, shoot, slug, test } from './support/fixtures';
import { PENDING_KEY, PROVIDER_KEY } from './support/stack';

test.use({ stackOptions: { withKey: false, gpu: true, tokensPerSecond: 40 } });

test('first run in four steps: network, a pending then a valid key, models to serve, done @screenshots', async ({ app, stack }) => {
  // Many steps, each waiting on the real agent and hub; on 2 shared cores this is the longest spec.
  test.setTimeout(120_000);
  const [first, second] = stack.engine.models as [string, string];
  await expect(app.getByTestId('page-onboarding')).toBeVisible();
  await expect(app.locator('nav.sidebar')).toHaveCount(0);
  // One step at a time: the later ones open as they are reached.
  await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '1');
  for (const n of [2, 3, 4]) await expect(app.getByTestId(`onboarding-step-${n}`)).toBeDisabled();
  expect(await stack.providers()).toEqual([]);

  // Step 1: the networks are named with their addresses; this stack's config points at the dev hub (custom).
  await expect(app.getByTestId('network-custom')).toBeChecked();
  await expect(app.getByTestId('network-mainnet-urls')).toHaveText('wss://inference-ws.swanchain.io · https://api.swanchain.io');
  await expect(app.getByTestId('network-testnet-urls')).toHaveText('wss://inference-ws-dev.swanchain.io · https://inference-dev.swanchain.io');
  await app.getByTestId('network-mainnet').check();
  await expect(app.getByTestId('custom-hub-url')).toHaveCount(0);
  await app.getByTestId('network-custom').check();
  const wsUrl = stack.hubUrl.replace(/^http/, 'ws');
  await expect(app.getByTestId('custom-hub-url')).toHaveValue(wsUrl);
  await expect(app.getByTestId('custom-service-url')).toHaveValue(stack.hubUrl);
  await app.getByTestId('network-save').click();
  await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
  await expect(app.getByTestId('key-service-url')).toHaveText(stack.hubUrl);

  // Settings are one click away, and the way back keeps the setup.
  await app.getByTestId('onboarding-settings').click();
  await expect(app.getByTestId('page-settings')).toBeVisible();
  await expect(app.getByTestId('network-name')).toHaveText('custom hub');
  await app.getByTestId('use-testnet').click();
  await expect(app.getByTestId('input-hubUrl')).toHaveValue('wss://inference-ws-dev.swanchain.io');
  await expect(app.getByTestId('input-serviceUrl')).toHaveValue('https://inference-dev.swanchain.io');
  await expect(app.getByTestId('network-name')).toHaveText('Swan Inference testnet');
  // Not saved: back to the setup, still on the dev hub.
  await app.getByTestId('onboarding-back').click();
  await expect(app.getByTestId('page-onboarding')).toBeVisible();

  // Step 2: where keys come from, then a wrong key, refused in the hub's words next to the field.
  // A custom hub (the dev hub) has no Swan dashboard: its keys come from whoever runs it.
  await expect(app.getByTestId('dashboard-custom')).toBeVisible();
  await expect(app.getByTestId('dashboard-link')).toHaveCount(0);
  await app.getByTestId('key-input').fill('sk-prov-wrong-0000000');
  await app.getByTestId('key-check').click();
  // The hub's own words (the dev hub's "invalid" fixture).
  await expect(app.getByTestId('key-field-error')).toContainText('Invalid or revoked API key.');

  // A key pending review: saved, with the hub's status, step and next steps.
  await app.getByTestId('key-input').fill(PENDING_KEY);
  await app.getByTestId('key-check').click();
  await expect(app.getByTestId('key-valid')).toContainText('registered but not approved yet');
  await expect(app.getByTestId('key-status')).toHaveAttribute('data-can-connect', 'false');
  await expect(app.getByTestId('key-status-badge')).toHaveText('pending');
  // The network's own registration steps are named as the network's, not as this setup's.
  await expect(app.getByTestId('key-step')).toHaveText('Registration on the network: Request approval (1 of 4)');
  await expect(app.getByTestId('key-warning')).toContainText('not routed to this provider');
  await expect(app.getByTestId('key-next-steps')).toContainText('Wait for admin review');
  await expect(app.getByTestId('key-saved')).toBeVisible();
  await shoot(app, 'onboarding');
  await app.setViewportSize({ width: 360, height: 740 });
  await shoot(app, 'onboarding-360', { fullPage: true });
  await app.setViewportSize({ width: 1280, height: 800 });

  // The valid key: accepted, active, and the agent connects.
  await app.getByTestId('key-input').fill(PROVIDER_KEY);
  await app.getByTestId('key-check').click();
  await expect(app.getByTestId('key-status-badge')).toHaveText('active');
  await expect(app.getByTestId('key-status')).toHaveAttribute('data-can-connect', 'true');
  await expect.poll(async () => (await stack.provider())?.connected).toBe(true);
  await continueFromKey(app);

  // Step 3: GPUs, the engine behind models.json (probed although discovery is off), every model with a switch.
  await expect(app.getByTestId('onboarding-gpus')).toContainText('Simulated NVIDIA GPU (e2e)');
  await expect(app.getByTestId('engine-row')).toHaveCount(1);
  await expect(app.getByTestId('pick-' + slug(first))).toBeChecked();
  await expect(app.getByTestId('pick-' + slug(second))).toBeChecked();
  await app.getByTestId(`pick-${slug(second)}`).uncheck();
  await expect(app.getByTestId(`serve-row-${slug(second)}`)).toContainText('off');
  await expect(app.getByTestId(`serve-row-${slug(first)}`)).toContainText('served');

  // Step 4: start.
  await app.getByTestId('serve-continue').click();
  await expect(app.getByTestId('onboarding-summary-models')).toContainText(`1 model(s) to serve: ${first}`);
  await app.getByTestId('onboarding-go').click();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  await expect.poll(async () => (await stack.provider())?.models).toEqual([first]);

  await app.reload();
  await expect(app.locator('[data-app-state="loaded"]')).toBeVisible();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await go(app, 'settings');
  await expect(app.getByTestId('field-providerKey')).toContainText('A key is set');
});

test('finishing with nothing to serve: the badge says so in amber, not a green "Serving"', async ({ app, stack }) => {
  const [first, second] = stack.engine.models as [string, string];
  await app.getByTestId('network-save').click();
  await app.getByTestId('key-input').fill(PROVIDER_KEY);
  await app.getByTestId('key-check').click();
  await expect(app.getByTestId('key-valid')).toBeVisible();
  await continueFromKey(app);
  for (const m of [first, second]) await app.getByTestId(`pick-${slug(m)}`).uncheck();
  await app.getByTestId('serve-continue').click();
  await expect(app.getByTestId('onboarding-summary-models')).toContainText('Nothing to serve yet');
  await app.getByTestId('onboarding-go').click();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await expect(app.getByTestId('link-state')).toHaveText('Connected, nothing to serve');
  await expect(app.getByTestId('link-state')).toHaveClass(/badge-warn/);
  await expect(app.getByTestId('sidebar-link-state')).toContainText('Connected, nothing to serve');
  await expect(app.getByTestId('nothing-to-serve')).toBeVisible();
  await expect.poll(async () => (await stack.provider())?.models).toEqual([]);
});

test('the API address follows the hub address until edited, and a key checked at a server that is not a Swan hub is not accepted', async ({ app }) => {
  // A server that answers JSON, but not as a hub: llama.cpp's 404 for a route it does not have (issue 40).
  const notHub = http.createServer((_req, res) => {
    res
      .writeHead(404, { 'content-type': 'application/json; charset=utf-8' })
      .end(JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }));
  });
  await new Promise<void>((resolve) => notHub.listen(0, '127.0.0.1', () => resolve()));
  try {
    const port = (notHub.address() as AddressInfo).port;
    await expect(app.getByTestId('network-custom')).toBeChecked();
    // Typing the hub's address moves the API address with it (no prefilled port left behind)…
    await app.getByTestId('custom-hub-url').fill(`127.0.0.1:${port}`);
    await expect(app.getByTestId('custom-service-url')).toHaveValue(`http://127.0.0.1:${port}`);
    await app.getByTestId('custom-hub-url').fill(`ws://127.0.0.1:${port}/ws`);
    await expect(app.getByTestId('custom-service-url')).toHaveValue(`http://127.0.0.1:${port}`);
    // …until the owner edits the API address: then it is theirs.
    await app.getByTestId('custom-service-url').fill('http://127.0.0.1:9/api-of-my-own');
    await app.getByTestId('custom-hub-url').fill(`127.0.0.1:${port}`);
    await expect(app.getByTestId('custom-service-url')).toHaveValue('http://127.0.0.1:9/api-of-my-own');
    await app.getByTestId('custom-service-url').fill(`http://127.0.0.1:${port}`);
    await app.getByTestId('network-save').click();
    await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
    await expect(app.getByTestId('key-service-url')).toHaveText(`http://127.0.0.1:${port}`);
    await app.getByTestId('key-input').fill(PROVIDER_KEY);
    await app.getByTestId('key-check').click();
    await expect(app.getByTestId('key-result')).toHaveAttribute('data-code', 'not_a_hub');
    await expect(app.getByTestId('key-field-error')).toContainText('does not answer like a Swan hub (HTTP 404)');
    await expect(app.getByTestId('key-valid')).toHaveCount(0);
    await expect(app.getByTestId('key-continue')).toBeDisabled();
  } finally {
    await new Promise<void>((resolve) => notHub.close(() => resolve()));
  }
});
