// A first run from an empty home to each network an owner can pick, in Chromium against the real agent:
// step 1 saves the network with no confirmation (no key is saved yet), step 2 checks the key with that
// network, step 3 adds the engine by HOST:PORT, and once started the agent dials the chosen hub with the
// key (the hub stand-in has the provider registered, and a request sent through it is answered). With a
// key saved, moving to a network that has not had it asks for the key again, in step 1, in view.
import { expect, type Page } from '@playwright/test';
import { NETWORK_DASHBOARDS, NETWORKS } from '../src/shared/networks';
import { firstRunTest, type FirstRunStack, type Network } from './support/first-run';
import { PROVIDER_KEY } from './support/stack';
import { continueFromKey, slug } from './support/fixtures';

const test = firstRunTest;

// Each test starts an agent, hubs and an engine as processes and walks four steps; on two shared cores
// that takes longer than the default budget.
test.slow();

/** Step 3: the engine by HOST:PORT (as the CLI takes it), its models switched on by the owner. */
async function addEngine(app: Page, first: FirstRunStack): Promise<void> {
  await expect(app.getByTestId('onboarding-serve')).toBeVisible();
  await expect(app.getByTestId('no-engine')).toBeVisible();
  const hostPort = first.engine.url.replace(/^http:\/\//, '');
  await app.getByTestId('endpoint-url').fill(hostPort);
  await app.getByTestId('endpoint-add').click();
  await expect(app.getByTestId('endpoint-result')).toContainText(`Added ${first.engine.url}:`);
  // Found engines' models start switched off: the owner switches on what to serve.
  for (const m of first.engine.models) {
    await expect(app.getByTestId(`serve-row-${slug(m)}`)).toContainText('off');
    await app.getByTestId(`pick-${slug(m)}`).check();
    await expect(app.getByTestId(`serve-row-${slug(m)}`)).toContainText('served');
  }
  // Removable where it was added.
  await expect(app.getByTestId('engine-row').filter({ hasText: first.engine.url }).getByTestId('engine-remove')).toBeVisible();
}

/** Steps 3 and 4, then the agent serves the chosen hub with the key. */
async function finishAndServe(app: Page, first: FirstRunStack, network: Network): Promise<void> {
  await continueFromKey(app);
  await addEngine(app, first);
  await app.getByTestId('serve-continue').click();
  await expect(app.getByTestId('onboarding-summary-models')).toContainText(`${first.engine.models.length} model(s) to serve`);
  await app.getByTestId('onboarding-go').click();
  await expect(app.getByTestId('page-dashboard')).toBeVisible();
  await expect(app.getByTestId('link-state')).toHaveText('Connected');
  const hub = first.hub(network);
  // The dev hub takes a provider only with its token: registered there means dialled with the key.
  await expect
    .poll(async () =>
      (await hub.providers())
        .find((p) => p.connected)
        ?.models.slice()
        .sort(),
    )
    .toEqual(first.engine.models.slice().sort());
  expect(await hub.chat(first.engine.models[0]!)).toContain('[simulated]');
}

for (const network of ['mainnet', 'testnet'] as const) {
  test.describe(`first run to ${network}`, () => {
    test.use({ networks: [network] });
    test(`network, key checked with ${network}, engine by HOST:PORT, then serving ${network}'s hub`, async ({ app, first }) => {
      await expect(app.getByTestId('page-onboarding')).toBeVisible();
      await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '1');
      // The first-run config is mainnet's.
      await expect(app.getByTestId('network-mainnet')).toBeChecked();
      await app.getByTestId(`network-${network}`).check();
      await app.getByTestId('network-save').click();

      // Step 2 names the network it checks the key with: the one just saved, with its real address.
      await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
      await expect(app.getByTestId('key-network')).toHaveText(NETWORKS[network].label);
      await expect(app.getByTestId('key-service-url')).toHaveText(NETWORKS[network].serviceUrl);
      // Keys come from the chosen network's own dashboard (a mainnet key is refused on testnet).
      await expect(app.getByTestId('dashboard-link')).toHaveAttribute('href', NETWORK_DASHBOARDS[network]);
      await expect(app.getByTestId('key-continue')).toBeDisabled();
      await app.getByTestId('key-input').fill(PROVIDER_KEY);
      await app.getByTestId('key-check').click();
      await expect(app.getByTestId('key-status-badge')).toHaveText('active');
      await expect(app.getByTestId('key-saved')).toBeVisible();
      // Checked with the chosen network's API, not another's.
      const statusHits = first.platform.hits.filter((h) => h.path === '/api/v1/provider/status');
      if (network === 'mainnet') expect(statusHits).toContainEqual({ path: '/api/v1/provider/status', method: 'GET', auth: `Bearer ${PROVIDER_KEY}` });
      else expect(statusHits).toEqual([]);

      await finishAndServe(app, first, network);
      expect(first.agentOutput()).toContain('SWAN_NETWORK_STAND_INS (tests only)');
    });
  });
}

test.describe('first run to a custom hub', () => {
  test.use({ networks: ['custom'] });
  test('the dev hub by HOST:PORT as it prints it, no confirmation on a first run, then serving it', async ({ app, first }) => {
    const hub = first.hub('custom');
    await app.getByTestId('network-custom').check();
    // Plain ws:// to another machine: saved (no key to protect yet), but said before going on.
    await app.getByTestId('custom-hub-url').fill('192.0.2.10:8081');
    await app.getByTestId('custom-service-url').fill('');
    await app.getByTestId('network-save').click();
    await expect(app.getByTestId('network-warning')).toContainText('not encrypted');
    await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '1');
    // HOST:PORT is ws://, and an empty API address is the hub's own (the dev hub serves both).
    await app.getByTestId('custom-hub-url').fill(new URL(hub.url).host);
    await app.getByTestId('custom-service-url').fill('');
    await app.getByTestId('network-save').click();
    // No key saved: nothing to protect, nothing to confirm.
    await expect(app.getByTestId('key-destination-confirm')).toHaveCount(0);
    await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
    await expect(app.getByTestId('key-network')).toHaveText(`the custom hub at ${new URL(hub.url).host}`);
    await expect(app.getByTestId('key-service-url')).toHaveText(hub.url);
    // A key the hub refuses is refused in its words, and nothing goes on.
    await app.getByTestId('key-input').fill('sk-prov-wrong-0000000');
    await app.getByTestId('key-check').click();
    await expect(app.getByTestId('key-field-error')).toContainText('Invalid or revoked API key.');
    await expect(app.getByTestId('key-continue')).toBeDisabled();
    await app.getByTestId('key-input').fill(PROVIDER_KEY);
    await app.getByTestId('key-check').click();
    await expect(app.getByTestId('key-status-badge')).toHaveText('active');
    await finishAndServe(app, first, 'custom');
  });
});

test.describe('a saved key and a new network', () => {
  test.use({ networks: ['custom', 'testnet'] });
  test('going back to step 1 for another network asks for the key again there, then serves that network', async ({ app, first }) => {
    const custom = first.hub('custom');
    await app.getByTestId('network-custom').check();
    await app.getByTestId('custom-hub-url').fill(custom.wsUrl);
    await app.getByTestId('custom-service-url').fill(custom.url);
    await app.getByTestId('network-save').click();
    await app.getByTestId('key-input').fill(PROVIDER_KEY);
    await app.getByTestId('key-check').click();
    await expect(app.getByTestId('key-status-badge')).toHaveText('active');
    await expect.poll(async () => (await custom.providers()).some((p) => p.connected)).toBe(true);

    await app.getByTestId('onboarding-step-1').click();
    await app.getByTestId('network-testnet').check();
    await app.getByTestId('network-save').click();
    // The key would go somewhere it has not been: held, and asked for here, in view.
    const ask = app.getByTestId('key-destination-confirm');
    await expect(ask).toBeInViewport();
    await expect(ask).toContainText(new URL(NETWORKS.testnet.hubUrl).host);
    await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '1');
    await expect(app.getByTestId('owner-approval-command')).toContainText('swan-provider approve');
    // An empty key is refused in place.
    await app.getByTestId('network-confirm').click();
    await expect(app.getByTestId('network-confirm-key-field-error')).toBeVisible();
    await app.getByTestId('network-confirm-key').fill(PROVIDER_KEY);
    await app.getByTestId('network-confirm').click();
    await expect(app.getByTestId('onboarding-steps')).toHaveAttribute('data-step', '2');
    await expect(app.getByTestId('key-network')).toHaveText(NETWORKS.testnet.label);
    await expect(app.getByTestId('key-saved')).toBeVisible();
    // The agent left the custom hub for testnet's.
    await expect.poll(async () => (await first.hub('testnet').providers()).some((p) => p.connected)).toBe(true);
    await expect.poll(async () => (await custom.providers()).some((p) => p.connected)).toBe(false);
    await finishAndServe(app, first, 'testnet');
  });
});
