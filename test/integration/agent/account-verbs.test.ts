// Payout and activation through a real Agent and the platform stand-in: the payout address is set only with
// the owner's approval given outside the console (bound to that address, redeemed with the grant the refusal
// carried), the owner address once, approval asked for with the node's name, and the platform's answers come
// back with their stable codes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRead, ApprovalRequestView, ProviderAccountView, ProviderAddressesView } from '../../../src/shared/views/account';
import { PlatformApi } from '../../support/platform-api';
import { refusedForOwner } from '../../support/approvals';
import { startStack, TEST_KEY, type Stack } from '../../support/stack';

const WALLET = '0x46f2b8De0B7Fa1B1cF6C0dB5C2E8a9d40f13F93c';
const OTHER = '0x0000000000000000000000000000000000000001';

let api: PlatformApi;
let stack: Stack;
const invoke = <T>(channel: string, args: unknown): Promise<T> => stack.agent.invoke(channel, args) as Promise<T>;

beforeEach(async () => {
  api = await PlatformApi.start(TEST_KEY);
  stack = await startStack({ hub: false, serviceUrl: api.url });
});
afterEach(async () => {
  await stack?.close();
  await api?.close();
});

describe('account verbs', () => {
  it('reads the addresses and the collateral chains', async () => {
    const v = await invoke<ProviderAccountView>('account.get', {});
    expect(v.addresses).toMatchObject({ ok: true, value: { ownerAddress: '', beneficiaryAddress: '' } });
    expect(v.collateral).toMatchObject({ ok: true, value: [{ tokenSymbol: 'SWAN', minCollateral: 100 }] });
  });

  it('holds a new payout address for the owner, then sets exactly that address', async () => {
    const c = await refusedForOwner(invoke('account.setBeneficiary', { address: WALLET }));
    expect(c.kind).toBe('payout_address');
    expect(c.summary).toContain(WALLET);
    expect(api.account.puts).toHaveLength(0);
    await stack.agent.approvals.decide(c.code, 'approve', 'test');
    // The approval's id, which every console socket hears, is not the grant: only the asking call's refusal carried that.
    await expect(invoke('account.setBeneficiary', { address: WALLET, approvalId: c.approvalId })).rejects.toMatchObject({ code: 'invalid_args' });
    // The approval is for that address only.
    await refusedForOwner(invoke('account.setBeneficiary', { address: OTHER, grant: c.grant! }));
    const c2 = await refusedForOwner(invoke('account.setBeneficiary', { address: WALLET }));
    await stack.agent.approvals.decide(c2.code, 'approve', 'test');
    const r = await invoke<AccountRead<ProviderAddressesView>>('account.setBeneficiary', { address: WALLET, grant: c2.grant! });
    expect(r).toMatchObject({ ok: true, value: { beneficiaryAddress: WALLET } });
    expect(api.account.beneficiary_address).toBe(WALLET);
  });

  it('sets the owner address once; the second is owner_address_set', async () => {
    const setOwner = async (address: string): Promise<AccountRead<ProviderAddressesView>> => {
      const c = await refusedForOwner(invoke('account.setOwner', { address, permanent: true }));
      await stack.agent.approvals.decide(c.code, 'approve', 'test');
      return invoke('account.setOwner', { address, permanent: true, grant: c.grant! });
    };
    expect(await setOwner(WALLET)).toMatchObject({ ok: true, value: { ownerAddress: WALLET } });
    expect(await setOwner(OTHER)).toMatchObject({ ok: false, code: 'owner_address_set' });
    expect(api.account.owner_address).toBe(WALLET);
  });

  it('refuses a malformed address before asking the owner', async () => {
    await expect(invoke('account.setBeneficiary', { address: '0x1234' })).rejects.toMatchObject({ code: 'invalid_args' });
    expect(stack.agent.approvals.pending()).toEqual([]);
  });

  it("asks for approval under the node's name, once", async () => {
    const r = await invoke<AccountRead<ApprovalRequestView>>('account.requestApproval', { hardwareSummary: '1x RTX 4090', contactEmail: 'me@example.com' });
    expect(r).toMatchObject({ ok: true, value: { status: 'under_review' } });
    expect(api.account.approvalRequests[0]).toMatchObject({ provider_name: stack.agent.snapshot().nodeName, hardware_summary: '1x RTX 4090' });
    expect(await invoke('account.requestApproval', { hardwareSummary: '1x RTX 4090', contactEmail: 'me@example.com' })).toMatchObject({
      ok: false,
      code: 'approval_already_requested',
    });
  });
});

describe('against the dev hub (demo and the e2e stack)', () => {
  it('answers the account routes in the same dialect: owner once, collateral a simulated chain', async () => {
    await stack.close();
    stack = await startStack();
    const v = await invoke<ProviderAccountView>('account.get', {});
    expect(v.addresses).toMatchObject({ ok: true, value: { ownerAddress: '' } });
    expect(v.collateral).toMatchObject({ ok: true, value: [{ chainName: 'Simulated chain (dev hub)' }] });
    const setOwner = async (address: string): Promise<AccountRead<ProviderAddressesView>> => {
      const c = await refusedForOwner(invoke('account.setOwner', { address, permanent: true }));
      await stack.agent.approvals.decide(c.code, 'approve', 'test');
      return invoke('account.setOwner', { address, permanent: true, grant: c.grant! });
    };
    expect(await setOwner(WALLET)).toMatchObject({ ok: true, value: { ownerAddress: WALLET } });
    expect(await setOwner(OTHER)).toMatchObject({ ok: false, code: 'owner_address_set' });
  });
});
