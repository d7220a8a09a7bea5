// Payout and activation in the app, in Chromium against the real agent and a stand-in of the platform API
// (test/support/platform-api.ts, in the Go CLI's dialect): the payout address set (with the owner's approval
// given outside the console, as a headless owner gives it) and shown; the owner address set once behind
// "cannot be changed", and a second one refused by the platform with its stable code; a pending provider
// asks for approval where it stands, and the hub's next steps read as this app's, not the Go CLI's.
import { expect, go, test } from './support/fixtures';
import type { ConsoleStack } from './support/stack';
import { defaultStackOptions } from './support/stack';
import type { Page } from '@playwright/test';

const WALLET = '0x46f2b8De0B7Fa1B1cF6C0dB5C2E8a9d40f13F93c';
const OTHER = '0x00000000000000000000000000000000000000A1';

/** Saves an address from one of the card's forms and approves it as a headless owner does. */
async function saveApproved(app: Page, stack: ConsoleStack, form: string, address: string): Promise<void> {
  const f = app.getByTestId(form);
  await f.getByTestId(`${form}-input`).fill(address);
  if (form === 'payout-owner-form') {
    // Nothing goes before the owner says they understand it is for good.
    await expect(f.getByTestId(`${form}-save`)).toBeDisabled();
    await f.getByTestId(`${form}-permanent-input`).check();
  }
  await f.getByTestId(`${form}-save`).click();
  await expect(f.getByTestId('key-destination-confirm')).toContainText(address);
  const code = (await f.getByTestId('owner-approval-code').textContent())!.replace(/^approve /, '');
  await stack.approve(code);
}

// Each test starts the agent, the dev hub, an engine and the platform stand-in, and walks several approvals.
test.slow();

test.describe('payout and activation', () => {
  test.use({ stackOptions: { ...defaultStackOptions, platform: { historyHoursAgo: 1 } } });

  test('the payout address set and shown; the owner address once; a second owner address refused by the platform', async ({ app, stack }) => {
    const platform = stack.platform!;
    await go(app, 'settings');
    const card = app.getByTestId('payout-card');
    await expect(card.getByTestId('payout-stage')).toHaveAttribute('data-stage', 'active');
    await expect(card.getByTestId('collateral-min')).toHaveText('100 SWAN');
    await expect(card.getByTestId('payout-beneficiary')).toContainText('not set');

    await saveApproved(app, stack, 'payout-beneficiary-form', WALLET);
    await expect(card.getByTestId('payout-beneficiary-form-saved')).toContainText(WALLET);
    await expect(card.getByTestId('payout-beneficiary')).toHaveText(WALLET);
    expect(platform.account.beneficiary_address).toBe(WALLET);

    await saveApproved(app, stack, 'payout-owner-form', WALLET);
    await expect(card.getByTestId('payout-owner')).toHaveText(WALLET);
    // Set: the console offers no second one.
    await expect(card.getByTestId('payout-owner-form')).toHaveCount(0);

    // Another device's stale view: the record read shows no owner, so the form is back; the platform refuses.
    platform.account.staleOwnerReads = 1000;
    await card.getByTestId('payout-refresh').click();
    await saveApproved(app, stack, 'payout-owner-form', OTHER);
    await expect(card.getByTestId('payout-owner-form-error')).toHaveAttribute('data-code', 'owner_address_set');
    expect(platform.account.owner_address).toBe(WALLET);
    platform.account.staleOwnerReads = 0;
    await card.getByTestId('payout-refresh').click();
    await expect(card.getByTestId('payout-owner')).toHaveText(WALLET);

    // The payout address stays the owner's to change.
    await saveApproved(app, stack, 'payout-beneficiary-form', OTHER);
    await expect(card.getByTestId('payout-beneficiary')).toHaveText(OTHER);
  });

  test("a pending provider asks for approval in the app, and the next steps are this app's", async ({ app, stack }) => {
    const platform = stack.platform!;
    platform.routes['/api/v1/provider/status'] = {
      kind: 'json',
      body: {
        provider_id: 'p1',
        name: 'e2e',
        status: 'pending',
        can_connect: false,
        api_key_valid: true,
        message: 'Your provider is registered but not approved yet.',
        next_steps: ["1. Run 'computing-provider inference request-approval' to request admin approval", '2. Wait for admin review'],
        step: 1,
        total_steps: 4,
        step_label: 'Request approval',
      },
    };
    await app.getByTestId('provider-status-refresh').click();
    const steps = app.getByTestId('provider-status-next-steps');
    await expect(steps.locator('li').first()).toContainText('swan-provider account request-approval');
    await expect(steps).not.toContainText('computing-provider');
    await expect(steps.locator('li').nth(1)).toHaveText('Wait for admin review');

    await go(app, 'settings');
    const card = app.getByTestId('payout-card');
    await expect(card.getByTestId('payout-stage')).toHaveAttribute('data-stage', 'pending');
    await card.getByTestId('approval-hardware').fill('1x RTX 4090, 64 GB RAM');
    await card.getByTestId('approval-email').fill('owner@example.com');
    await card.getByTestId('approval-ask').click();
    await expect(card.getByTestId('approval-asked')).toBeVisible();
    expect(platform.account.approvalRequests).toEqual([
      { provider_name: 'e2e-provider', hardware_summary: '1x RTX 4090, 64 GB RAM', contact_email: 'owner@example.com' },
    ]);
    await card.getByTestId('approval-ask').click();
    await expect(card.getByTestId('approval-error')).toHaveAttribute('data-code', 'approval_already_requested');
  });
});
