// `swan-provider usage` prints the console's earnings figures: power cost and net per period and
// model, what you keep with the projection, and the platform's record beside the ledger (from the
// agent's cached copies of the platform's answers while they are fresh; with no agent keeping them
// fresh, the CLI asks the platform itself, with the home's key).
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ledgerPath, usageCommand } from '../../src/cli/usage-command';
import { EarningsService } from '../../src/core/accounting/earnings';
import { Ledger } from '../../src/core/ledger/ledger';
import { memoryLog } from '../../src/core/base/log';
import { PlatformApi } from '../support/platform-api';
import { rec, tempDir } from '../support/ledger/helpers';
import { writeConfigToml } from '../support/config-toml';

let home: string;
let cleanup: () => void;
let api: PlatformApi;
beforeEach(async () => {
  ({ dir: home, cleanup } = tempDir());
  api = await PlatformApi.start('sk-cli');
});
afterEach(async () => {
  await api.close();
  cleanup();
});

describe('usage summary with earnings', () => {
  it('shows power cost, net, the projection and the platform record side by side', async () => {
    const now = Date.now();
    const ledger = Ledger.open(ledgerPath(home));
    // The agent fetched the platform's figures once (they are cached in the home folder).
    const agentSide = new EarningsService({
      home,
      ledger,
      log: memoryLog().child('e'),
      serviceUrl: () => api.url,
      providerKey: () => 'sk-cli',
      models: () => [],
    });
    await agentSide.overview();
    ledger.setNetworkRates(new Map([['openai/gpt-5.4', { inputPerM: 1.8, outputPerM: 10.8 }]]));
    ledger.setElectricityPrice({ perKwh: 0.3, currency: 'USD', usdPerUnit: 1 });
    // 2 h ago and now: 1000 in / 1000 out each → 0.0018 + 0.0108 = 0.0126 USD each; 100 Wh each → 0.03 USD each.
    ledger.record(rec(now - 2 * 3_600_000, { model: 'openai/gpt-5.4', tokensIn: 1000, tokensOut: 1000, energyWh: 100 }));
    ledger.record(rec(now - 1000, { model: 'openai/gpt-5.4', tokensIn: 1000, tokensOut: 1000, energyWh: 100 }));
    ledger.close();
    const hitsBefore = api.hits.length;
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    expect(await usageCommand({ home, action: 'summary', stdout: out, stderr: new PassThrough() })).toBe(0);
    expect(api.hits.length).toBe(hitsBefore);
    expect(text).toMatch(/earnings\s+power cost\s+net/);
    // Net: 0.0252 − 0.06 = −0.0348 USD
    expect(text).toMatch(/Last 7 days\s+2\s+0 \(0\.0%\)\s+2,000\s+2,000\s+0\.0252\s+0\.06\s+-0\.0348/);
    expect(text).toMatch(/earnings 0\.0252 USD, power 0\.200 kWh = 0\.06 USD, net -0\.0348 USD/);
    // 2 h of history, scaled to 24 h: −0.0348 × 12 = −0.4176 USD/day (×30 = −12.53 USD/month)
    // (the window is a few ms over 2 h by the time the summary runs)
    const m = /at the last 24 h rate: (-[\d.]+) USD\/day, (-[\d.]+) USD\/month/.exec(text);
    expect(Number(m?.[1])).toBeCloseTo(-0.4176, 3);
    expect(Number(m?.[2])).toBeCloseTo(-12.528, 1);
    expect(text).toMatch(/The platform's record \(as of .*\) beside this ledger/);
    expect(text).toMatch(/requests\s+120\s+2\s+118/);
    expect(text).toContain("Uptime over 7 days (the platform's figure): 97.5%");
    expect(text).toMatch(/openai\/gpt-5\.4\s+network\s+1\.8\s+10\.8/);
  });

  it("with no agent keeping the copy fresh, usage asks the platform itself (the home's ServiceURL and key)", async () => {
    writeConfigToml(home, { Inference: { ServiceURL: api.url, ApiKey: 'sk-cli' } });
    const ledger = Ledger.open(ledgerPath(home));
    ledger.record(rec(Date.now() - 1000, { model: 'm' }));
    ledger.close();
    const hitsBefore = api.hits.length;
    const out = new PassThrough();
    let text = '';
    out.on('data', (c: Buffer) => (text += c.toString()));
    expect(await usageCommand({ home, action: 'summary', stdout: out, stderr: new PassThrough() })).toBe(0);
    expect(api.hits.slice(hitsBefore).some((h) => h.path.includes('/provider/me/stats'))).toBe(true);
    expect(text).not.toContain('not fetched yet');
    expect(text).toMatch(/The platform's record \(as of .*\) beside this ledger/);
    expect(text).toMatch(/requests\s+120\s+1\s+119/);
    // Now the copy is fresh: a second look reads it and does not ask again.
    const again = api.hits.length;
    expect(await usageCommand({ home, action: 'summary', stdout: new PassThrough(), stderr: new PassThrough() })).toBe(0);
    expect(api.hits.slice(again).some((h) => h.path.includes('/provider/me/stats'))).toBe(false);
  });
});
