// `swan-provider account …` on a home folder against the platform stand-in: the addresses and the collateral
// shown, the payout address set, the owner address only after it is typed again (or --yes) and never twice,
// approval asked with the node's name; refusals print their code and exit 1, bad input exits 2.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { accountCommand, type AccountCommandOptions } from '../../src/cli/account-command';
import { PlatformApi } from '../support/platform-api';
import { KeyDestinations } from '../../src/core/config/key-destinations';
import { SettingsFile } from '../../src/core/config/settings-file';
import { freePort, tempHome } from '../support/stack';

const KEY = 'sk-prov-cli-account-0001';
const WALLET = '0x46f2b8De0B7Fa1B1cF6C0dB5C2E8a9d40f13F93c';
const OTHER = '0x0000000000000000000000000000000000000001';

let api: PlatformApi;
let home: string;

async function run(o: Omit<AccountCommandOptions, 'home' | 'stdout' | 'stderr' | 'env'>): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const code = await accountCommand({ home, env: {}, stdout, stderr, ...o });
  return { code, out: stdout.read()?.toString() ?? '', err: stderr.read()?.toString() ?? '' };
}

beforeEach(async () => {
  api = await PlatformApi.start(KEY);
  home = tempHome('swan-account-cli-');
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      'NodeName = "cli-rig"',
      '[Inference]',
      'Enable = true',
      `WebSocketURL = "ws://127.0.0.1:9"`,
      `ServiceURL = "${api.url}"`,
      `ApiKey = "${KEY}"`,
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  await api.close();
});

describe('swan-provider account', () => {
  it('never sends the key to an address its owner has not approved for it (key_destination_held), as the agent would not', async () => {
    // The agent's approvals kept (config.toml's own hosts), then the console's platform address moved to another
    // server: the agent holds the key there; so does this command, and it says so.
    const elsewhere = await PlatformApi.start(KEY);
    try {
      new KeyDestinations(home).seed(KEY, ['127.0.0.1:9', new URL(api.url).host]);
      SettingsFile.in(home).update((s) => ({ ...s, serviceUrl: elsewhere.url }));
      const r = await run({ action: 'show' });
      expect(r.code).toBe(2); // as with no key: nothing this command may use
      expect(r.err).toContain('(key_destination_held)');
      expect(elsewhere.hits.filter((h) => h.auth?.includes(KEY))).toEqual([]);
      // Approved: it goes there.
      new KeyDestinations(home).approve(KEY, [new URL(elsewhere.url).host]);
      expect((await run({ action: 'show' })).code).toBe(0);
      expect(elsewhere.hits.some((h) => h.auth === `Bearer ${KEY}`)).toBe(true);
    } finally {
      await elsewhere.close();
    }
  });

  it('shows where the provider stands, its addresses and the collateral', async () => {
    api.account.beneficiary_address = WALLET;
    const r = await run({ action: 'show' });
    expect(r.code).toBe(0);
    expect(r.out).toContain('provider: active');
    expect(r.out).toContain(`payout address:  ${WALLET}`);
    expect(r.out).toContain('at least 100 SWAN');
    const json = JSON.parse((await run({ action: 'show', json: true })).out) as { addresses: { ok: boolean } };
    expect(json.addresses.ok).toBe(true);
  });

  it('sets the payout address', async () => {
    expect(await run({ action: 'set-beneficiary', address: WALLET })).toMatchObject({ code: 0 });
    expect(api.account.beneficiary_address).toBe(WALLET);
  });

  it('sets the owner address only when typed again, and never twice', async () => {
    expect(await run({ action: 'set-owner', address: WALLET, confirm: async () => OTHER })).toMatchObject({ code: 2 });
    expect(api.account.puts).toHaveLength(0);
    expect(await run({ action: 'set-owner', address: WALLET, confirm: async () => WALLET.toLowerCase() })).toMatchObject({ code: 0 });
    const again = await run({ action: 'set-owner', address: OTHER, yes: true });
    expect(again.code).toBe(1);
    expect(again.err).toContain('(owner_address_set)');
    expect(api.account.owner_address).toBe(WALLET);
  });

  it("asks for approval under the node's name", async () => {
    expect(await run({ action: 'request-approval', hardware: '1x RTX 4090', email: 'me@example.com' })).toMatchObject({ code: 0 });
    expect(api.account.approvalRequests).toEqual([{ provider_name: 'cli-rig', hardware_summary: '1x RTX 4090', contact_email: 'me@example.com' }]);
    expect((await run({ action: 'request-approval', hardware: 'x', email: 'me@example.com' })).err).toContain('(approval_already_requested)');
  });

  it('refuses a malformed address with exit 2 before asking the platform, and says when the platform cannot be reached', async () => {
    expect(await run({ action: 'set-beneficiary', address: '0x12' })).toMatchObject({ code: 2, err: expect.stringContaining('(address_invalid)') });
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ serviceUrl: `http://127.0.0.1:${await freePort()}` }));
    const down = await run({ action: 'collateral' });
    expect(down.code).toBe(1);
    expect(down.err).toContain('(platform_unreachable)');
    expect(down.err).not.toMatch(/ECONNREFUSED|getaddrinfo/);
  });
});
