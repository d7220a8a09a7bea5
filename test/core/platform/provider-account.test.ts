// The provider's account on the platform, against the platform stand-in (test/support/platform-api.ts, in
// the Go CLI's dialect): the addresses read, the payout address set, the owner address set once, approval
// asked for once, the collateral chains; and every failure with its stable code, never a raw network error.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProviderAccountClient, isWalletAddress } from '../../../src/core/platform/provider-account';
import { PlatformApi } from '../../support/platform-api';
import { freePort } from '../../support/stack';

const KEY = 'sk-prov-account-test';
const WALLET = '0x46f2b8De0B7Fa1B1cF6C0dB5C2E8a9d40f13F93c';
const OTHER = '0x0000000000000000000000000000000000000001';

let api: PlatformApi;
let key = KEY;
const client = (serviceUrl?: string) =>
  new ProviderAccountClient({ serviceUrl: () => serviceUrl ?? api.url, providerKey: () => key, timeoutMs: 2000, now: () => 42 });

beforeEach(async () => {
  key = KEY;
  api = await PlatformApi.start(KEY);
});
afterEach(async () => {
  await api.close();
});

describe('wallet addresses', () => {
  it('takes 0x and 40 hex digits, nothing else (the shapes an owner actually types)', () => {
    expect(isWalletAddress(WALLET)).toBe(true);
    for (const bad of [WALLET.slice(2), WALLET.slice(0, -1), `${WALLET}c`, '', `${WALLET.slice(0, -1)}z`]) expect(isWalletAddress(bad)).toBe(false);
  });
});

describe('ProviderAccountClient', () => {
  it('reads the addresses with the key and the collateral chains without it', async () => {
    api.account.beneficiary_address = WALLET;
    const v = await client().view();
    expect(v.checkedAt).toBe(42);
    expect(v.addresses).toEqual({ ok: true, value: { providerId: 'p1', ownerAddress: '', workerAddress: '', beneficiaryAddress: WALLET } });
    expect(v.collateral.ok && v.collateral.value[0]).toMatchObject({
      chainId: 20241133,
      tokenSymbol: 'SWAN',
      minCollateral: 100,
      contractAddress: '0x1111111111111111111111111111111111111111',
    });
    expect(api.hits.find((h) => h.path === '/api/v1/provider/me')?.auth).toBe(`Bearer ${KEY}`);
    expect(api.hits.find((h) => h.path === '/api/v1/provider/collateral/contract')?.auth).toBeUndefined();
  });

  it('sets the payout address, and changes it again', async () => {
    const r = await client().setBeneficiary(WALLET);
    expect(r.ok && r.value.beneficiaryAddress).toBe(WALLET);
    const again = await client().setBeneficiary(OTHER);
    expect(again.ok && again.value.beneficiaryAddress).toBe(OTHER);
    expect(api.account.puts).toEqual([{ beneficiary_address: WALLET }, { beneficiary_address: OTHER }]);
  });

  it('sets the owner address once; a second set is refused with owner_address_set, here and by the platform', async () => {
    const first = await client().setOwner(WALLET);
    expect(first.ok && first.value.ownerAddress).toBe(WALLET);
    const second = await client().setOwner(OTHER);
    expect(second).toMatchObject({ ok: false, code: 'owner_address_set' });
    expect(api.account.puts).toHaveLength(1); // refused here, before the platform was asked
    // The platform's own refusal (another console set it between the read and the write) reads the same.
    api.account.staleOwnerReads = 1;
    expect(await client().setOwner(OTHER)).toMatchObject({ ok: false, code: 'owner_address_set' });
    expect(api.account.puts).toHaveLength(2);
    expect(api.account.owner_address).toBe(WALLET);
  });

  it('refuses what is not a wallet address before asking the platform', async () => {
    expect(await client().setOwner('0x123')).toMatchObject({ ok: false, code: 'address_invalid' });
    expect(await client().setBeneficiary(`${WALLET.slice(0, -1)}z`)).toMatchObject({ ok: false, code: 'address_invalid' });
    expect(api.account.puts).toHaveLength(0);
  });

  it('asks for approval once; a second ask is approval_already_requested', async () => {
    const r = await client().requestApproval({ providerName: 'rig', hardwareSummary: '1x RTX 4090', contactEmail: 'me@example.com' });
    expect(r).toMatchObject({ ok: true, value: { status: 'under_review' } });
    expect(api.account.approvalRequests).toEqual([{ provider_name: 'rig', hardware_summary: '1x RTX 4090', contact_email: 'me@example.com' }]);
    expect(await client().requestApproval({ providerName: 'rig', hardwareSummary: 'x', contactEmail: 'me@example.com' })).toMatchObject({
      ok: false,
      code: 'approval_already_requested',
    });
  });

  it('says no_key, key_refused, platform_unreachable and bad_answer with their codes, never a raw error', async () => {
    key = '';
    expect(await client().addresses()).toMatchObject({ ok: false, code: 'no_key' });
    key = 'sk-prov-wrong';
    expect(await client().addresses()).toMatchObject({ ok: false, code: 'key_refused' });
    key = KEY;
    const down = await client(`http://127.0.0.1:${await freePort()}`).addresses();
    expect(down).toMatchObject({ ok: false, code: 'platform_unreachable' });
    const unresolvable = await client('http://no-such-host.invalid').addresses();
    expect(unresolvable).toMatchObject({ ok: false, code: 'platform_unreachable' });
    api.routes['/api/v1/provider/collateral/contract'] = { kind: 'raw', text: '{"chains": "many"}' };
    expect(await client().collateral()).toMatchObject({ ok: false, code: 'bad_answer' });
    api.routes['/api/v1/provider/collateral/contract'] = { kind: 'status', status: 500, body: '{"error":{"message":"db down"}}' };
    const refused = await client().collateral();
    expect(refused).toMatchObject({ ok: false, code: 'platform_refused' });
  });

  it('reads a body no larger than 1 MB', async () => {
    const big = http.createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"chains":[],"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`),
    );
    await new Promise<void>((r) => big.listen(0, '127.0.0.1', r));
    try {
      const r = await client(`http://127.0.0.1:${(big.address() as AddressInfo).port}`).collateral();
      expect(r).toMatchObject({ ok: false, code: 'bad_answer' });
    } finally {
      await new Promise((r) => big.close(r));
    }
  });
});
