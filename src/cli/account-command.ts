// `swan-provider account …`: payout and activation from a terminal, what the Go provider's `inference status`,
// `set-beneficiary`, `request-approval` and `deposit` do, with the key and platform address this home's agent
// uses (config.toml with the console's settings; the key where `doctor` finds it). A terminal on the owner's
// account is the owner already, so nothing waits for an approval here; the owner address still asks "this
// cannot be changed" (or takes --yes). Exit codes: 0 done, 1 the platform refused or could not be reached,
// 2 a bad argument or no usable config/key.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline/promises';
import type { AccountFailure, AccountRead, CollateralChainView, ProviderAddressesView } from '../shared/views/account';
import { terminalWriter } from '../core/base/terminal';
import { ConfigError, loadConfig } from '../core/config/config';
import { homePath } from '../core/config/home-layout';
import { OwnerValues } from '../core/config/owner-values';
import { describeStatus, fetchProviderStatus, statusView } from '../core/hub/provider-status';
import { isWalletAddress, ProviderAccountClient } from '../core/platform/provider-account';

/** Output already made safe for a terminal (terminalWriter). */
type Writer = ReturnType<typeof terminalWriter>;

export type AccountAction = 'show' | 'set-beneficiary' | 'set-owner' | 'request-approval' | 'collateral';

export interface AccountCommandOptions {
  home: string;
  action: AccountAction;
  config?: string;
  address?: string;
  yes?: boolean;
  json?: boolean;
  hardware?: string;
  email?: string;
  name?: string;
  env?: NodeJS.ProcessEnv;
  stdout?: NodeJS.WritableStream;
  stderr?: NodeJS.WritableStream;
  /** The owner's answer to "cannot be changed" (tests); a TTY is asked otherwise. */
  confirm?: (question: string) => Promise<string>;
}

interface Ctx {
  client: ProviderAccountClient;
  serviceUrl: string;
  key: string;
  nodeName: string;
}

/** The platform address and key this home's agent would use, or why there are none. */
function context(o: AccountCommandOptions, err: Writer): Ctx | undefined {
  const env = o.env ?? process.env;
  const configPath = path.resolve(o.config ?? homePath(o.home, 'config'));
  if (!fs.existsSync(configPath)) {
    err.write(`No config at ${configPath}. Run \`swan-provider init --home ${o.home}\` (or the desktop app) first.\n`);
    return undefined;
  }
  let cfg;
  try {
    cfg = loadConfig(configPath, env);
  } catch (e) {
    err.write(`The config could not be read: ${e instanceof ConfigError ? e.message : (e as Error).message}\n`);
    return undefined;
  }
  const values = OwnerValues.ofHome(o.home, cfg, env);
  const serviceUrl = values.serviceUrl();
  const key = values.providerKey();
  const held = values.keyHeld();
  if (held.length > 0) {
    err.write(
      `The provider key is held (key_destination_held): it would go to ${held.join(', ')}, which you have not approved for it. Approve the new address in the console (Settings) or with \`swan-provider approve\`, or set the address back.\n`,
    );
    return undefined;
  }
  if (!key) {
    err.write(
      'No provider key this command can read: paste it in the console (Settings), or set ApiKey in [Inference] or INFERENCE_API_KEY. A key the desktop app keeps in the OS keychain is read by the app only: use Settings → Payout & activation there.\n',
    );
    return undefined;
  }
  return {
    client: new ProviderAccountClient({ serviceUrl: () => serviceUrl, providerKey: () => key }),
    serviceUrl,
    key,
    nodeName: values.nodeName(),
  };
}

function failed(err: Writer, r: AccountFailure): number {
  err.write(`${r.message} (${r.code})\n`);
  return 1;
}

function addressLines(v: ProviderAddressesView): string[] {
  return [
    `payout address:  ${v.beneficiaryAddress || 'not set (payouts go to the owner address)'}`,
    `owner address:   ${v.ownerAddress || 'not set yet (`swan-provider account set-owner ADDRESS`, once)'}`,
    ...(v.workerAddress ? [`worker address:  ${v.workerAddress}`] : []),
  ];
}

function chainLines(chains: CollateralChainView[]): string[] {
  if (chains.length === 0) return ['collateral: the platform lists no chain right now'];
  return chains.flatMap((c) => [
    `collateral on ${c.chainName} (chain ${c.chainId}): at least ${c.minCollateral} ${c.tokenSymbol}`,
    `  to the contract ${c.contractAddress}, from the owner wallet${c.explorerUrl ? ` (explorer: ${c.explorerUrl})` : ''}`,
  ]);
}

async function askPermanent(o: AccountCommandOptions, address: string, err: Writer): Promise<boolean> {
  if (o.yes) return true;
  const question = `The owner address is set once and the platform never changes it. Type the address again to make ${address} the owner: `;
  if (o.confirm) return (await o.confirm(question)).trim().toLowerCase() === address.toLowerCase();
  if (!process.stdin.isTTY) {
    err.write('The owner address cannot be changed once set: run this in a terminal to confirm it, or add --yes.\n');
    return false;
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim().toLowerCase() === address.toLowerCase();
  } finally {
    rl.close();
  }
}

function written(out: Writer, r: AccountRead<ProviderAddressesView>, err: Writer, what: string): number {
  if (!r.ok) return failed(err, r);
  out.write(`Saved ${what} on the platform.\n${addressLines(r.value).join('\n')}\n`);
  return 0;
}

export async function accountCommand(o: AccountCommandOptions): Promise<number> {
  const out = terminalWriter(o.stdout ?? process.stdout);
  const err = terminalWriter(o.stderr ?? process.stderr);
  if ((o.action === 'set-beneficiary' || o.action === 'set-owner') && !isWalletAddress(o.address ?? '')) {
    err.write(
      'That is not a wallet address: it starts with 0x and has 40 letters a–f and digits after it. Copy it again from your wallet. (address_invalid)\n',
    );
    return 2;
  }
  const ctx = context(o, err);
  if (!ctx) return 2;
  switch (o.action) {
    case 'set-beneficiary':
      return written(out, await ctx.client.setBeneficiary(o.address!), err, `the payout address ${o.address}`);
    case 'set-owner': {
      if (!(await askPermanent(o, o.address!, err))) {
        err.write('Not set: nothing was changed.\n');
        return 2;
      }
      return written(out, await ctx.client.setOwner(o.address!), err, `the owner address ${o.address}`);
    }
    case 'request-approval': {
      const r = await ctx.client.requestApproval({ providerName: o.name || ctx.nodeName, hardwareSummary: o.hardware ?? '', contactEmail: o.email ?? '' });
      if (!r.ok) return failed(err, r);
      out.write(`Approval requested (status: ${r.value.status}). ${r.value.message}\n\`swan-provider account\` shows where the provider stands.\n`);
      return 0;
    }
    case 'collateral': {
      const r = await ctx.client.collateral();
      if (!r.ok) return failed(err, r);
      out.write(`${chainLines(r.value).join('\n')}\n`);
      return 0;
    }
    case 'show':
      return show(o, ctx, out, err);
  }
}

async function show(o: AccountCommandOptions, ctx: Ctx, out: Writer, err: Writer): Promise<number> {
  const [status, view] = await Promise.all([fetchProviderStatus(ctx.serviceUrl, ctx.key), ctx.client.view()]);
  const st = statusView(`${ctx.serviceUrl.replace(/\/+$/, '')}/api/v1/provider/status`, status);
  if (o.json) {
    out.write(`${JSON.stringify({ status: st, addresses: view.addresses, collateral: view.collateral }, null, 2)}\n`);
    return view.addresses.ok ? 0 : 1;
  }
  const lines = [
    `provider: ${st.state === 'unreachable' ? `status unavailable (${st.error ?? 'no answer'})` : (st.status ?? 'unknown')}`,
    ...describeStatus(st).slice(st.status ? 1 : 0),
  ];
  lines.push(...(view.addresses.ok ? addressLines(view.addresses.value) : [`addresses: ${view.addresses.message} (${view.addresses.code})`]));
  lines.push(...(view.collateral.ok ? chainLines(view.collateral.value) : [`collateral: ${view.collateral.message} (${view.collateral.code})`]));
  out.write(`${lines.join('\n')}\n`);
  if (!view.addresses.ok) err.write('The addresses could not be read; nothing was changed.\n');
  return view.addresses.ok ? 0 : 1;
}
