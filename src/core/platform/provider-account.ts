// The provider's account on the platform, where the Go provider reaches it only from its CLI or the web
// dashboard (cmd/computing-provider/inference.go, HUB-PROTOCOL.md "HTTP API"):
//   GET  {api}/provider/me                   (Bearer key) {id, owner_address, worker_address, beneficiary_address},
//                                            possibly wrapped in {data: …}
//   PUT  {api}/provider/me                   (Bearer key) {beneficiary_address} at any time; {owner_address} once:
//                                            the platform refuses a second set
//   POST {api}/provider/request-approval     (Bearer key) {provider_name, hardware_summary, contact_email} →
//                                            {provider_id, status, message, requested_at}; 409 when asked already
//   GET  {api}/provider/collateral/contract  (public) {chains: [{chain_id, chain_name, contract_address,
//                                            token_address, token_symbol, token_decimals, min_collateral, rpc_url,
//                                            explorer_url, faucet_url}]}
// Every answer is an outside party's: bounded, read with zod, its words clipped. Nothing here throws: each
// call answers a value or a failure with a stable code (src/shared/views/account.ts).
import { z } from 'zod';
import type {
  AccountFailure,
  AccountFailureCode,
  AccountRead,
  ApprovalRequestView,
  CollateralChainView,
  ProviderAccountView,
  ProviderAddressesView,
} from '../../shared/views/account';
import { JSON_LIMITS, readJson } from '../http/bounded-json';
import { networkFailure } from '../http/network-failure';
import { apiBase, PLATFORM_TIMEOUT_MS } from './get-json';
import { readCapped } from '../http/read-body';

/** A wallet address as the platform takes it: 0x and 40 hexadecimal digits (the Go CLI's validateEthAddress). */
export const WALLET_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function isWalletAddress(s: string): boolean {
  return WALLET_ADDRESS.test(s);
}

/** Platform words are shown to the owner: control characters out, length bounded. */
const clip = (s: string, n = 500): string =>
  s
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .trim()
    .slice(0, n);
const address = z
  .string()
  .max(128)
  .nullish()
  .transform((s) => (s ? clip(s, 128) : ''));
const text = (n: number) =>
  z
    .string()
    .max(4096)
    .nullish()
    .transform((s) => (s ? clip(s, n) : undefined));

const meSchema = z
  .object({ id: z.union([z.string().max(128), z.number()]).nullish(), owner_address: address, worker_address: address, beneficiary_address: address })
  .passthrough();

const chainSchema = z
  .object({
    chain_id: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    chain_name: text(100),
    contract_address: z.string().max(128),
    token_address: text(128),
    token_symbol: text(16),
    min_collateral: z.number().finite().nonnegative().max(1e15).nullish(),
    explorer_url: text(300),
    faucet_url: text(300),
  })
  .passthrough();
const collateralSchema = z.object({ chains: z.array(chainSchema).max(50).nullish() }).passthrough();

const approvalSchema = z.object({ status: text(64), message: text(1000), requested_at: text(64) }).passthrough();

export interface AccountClientOptions {
  serviceUrl: () => string;
  providerKey: () => string;
  timeoutMs?: number;
  now?: () => number;
}

type Answer = { ok: true; status: number; json: unknown } | AccountFailure;

export interface ApprovalRequest {
  providerName: string;
  hardwareSummary: string;
  contactEmail: string;
}

export class ProviderAccountClient {
  constructor(private readonly o: AccountClientOptions) {}

  /** The addresses and the collateral chains, read side by side. */
  async view(): Promise<ProviderAccountView> {
    const [addresses, collateral] = await Promise.all([this.addresses(), this.collateral()]);
    return { checkedAt: (this.o.now ?? Date.now)(), addresses, collateral };
  }

  async addresses(): Promise<AccountRead<ProviderAddressesView>> {
    const a = await this.call('GET', '/provider/me');
    if (!a.ok) return a;
    if (a.status !== 200) return refusal(a, 'the provider record');
    const p = meSchema.safeParse(unwrap(a.json));
    if (!p.success) return fail('bad_answer', 'The platform answered the provider record with something this app does not read. Try again later.');
    const me = p.data;
    return {
      ok: true,
      value: {
        ...(me.id !== undefined && me.id !== null && me.id !== '' ? { providerId: clip(String(me.id), 128) } : {}),
        ownerAddress: me.owner_address,
        workerAddress: me.worker_address,
        beneficiaryAddress: me.beneficiary_address,
      },
    };
  }

  async collateral(): Promise<AccountRead<CollateralChainView[]>> {
    const a = await this.call('GET', '/provider/collateral/contract', undefined, false);
    if (!a.ok) return a;
    if (a.status !== 200) return refusal(a, 'the collateral contract');
    const p = collateralSchema.safeParse(unwrap(a.json));
    if (!p.success) return fail('bad_answer', 'The platform answered the collateral step with something this app does not read. Try again later.');
    return { ok: true, value: (p.data.chains ?? []).map(chainView) };
  }

  /** Where payouts go; may be changed at any time. */
  async setBeneficiary(addr: string): Promise<AccountRead<ProviderAddressesView>> {
    if (!isWalletAddress(addr)) return badAddress();
    const a = await this.call('PUT', '/provider/me', { beneficiary_address: addr });
    if (!a.ok) return a;
    if (a.status < 200 || a.status >= 300) return refusal(a, 'the payout address');
    return this.addresses();
  }

  /**
   * The owner address, set once: refused here when the platform already has one (it would refuse too), and
   * a refusal of the platform's (409, or any 4xx once the record shows an owner) reads as `owner_address_set`.
   */
  async setOwner(addr: string): Promise<AccountRead<ProviderAddressesView>> {
    if (!isWalletAddress(addr)) return badAddress();
    const before = await this.addresses();
    if (!before.ok) return before;
    if (before.value.ownerAddress) return ownerSet(before.value.ownerAddress);
    const a = await this.call('PUT', '/provider/me', { owner_address: addr });
    if (!a.ok) return a;
    if (a.status === 409) return ownerSet();
    if (a.status < 200 || a.status >= 300) return refusal(a, 'the owner address');
    return this.addresses();
  }

  async requestApproval(r: ApprovalRequest): Promise<AccountRead<ApprovalRequestView>> {
    const a = await this.call('POST', '/provider/request-approval', {
      provider_name: r.providerName,
      hardware_summary: r.hardwareSummary,
      contact_email: r.contactEmail,
    });
    if (!a.ok) return a;
    if (a.status === 409)
      return fail(
        'approval_already_requested',
        `Approval was asked for already${platformWords(a.json)}. The platform reviews it; the provider status says when it moves on.`,
      );
    if (a.status !== 200 && a.status !== 201) return refusal(a, 'the approval request');
    const p = approvalSchema.safeParse(unwrap(a.json));
    if (!p.success) return fail('bad_answer', 'The platform answered the approval request with something this app does not read. Check the provider status.');
    return {
      ok: true,
      value: {
        status: p.data.status ?? 'under_review',
        message: p.data.message ?? 'Approval requested.',
        ...(p.data.requested_at ? { requestedAt: p.data.requested_at } : {}),
      },
    };
  }

  /** One bounded call: a body on PUT and POST, the key as a Bearer token unless the route is public. */
  private async call(method: 'GET' | 'PUT' | 'POST', route: string, body?: unknown, withKey = true): Promise<Answer> {
    const key = this.o.providerKey().trim();
    if (withKey && !key) return fail('no_key', 'No provider key is set yet. Paste it in Settings first.');
    const url = `${apiBase(this.o.serviceUrl())}${route}`;
    const timeoutMs = this.o.timeoutMs ?? PLATFORM_TIMEOUT_MS;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          ...(withKey ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (e) {
      return fail(
        'platform_unreachable',
        `The Swan platform could not be reached: ${networkFailure(e, new URL(url).host, timeoutMs).words}. Check this machine's network and try again; nothing was changed.`,
      );
    }
    let raw: string;
    try {
      raw = await readCapped(res, 1024 * 1024);
    } catch {
      return fail('bad_answer', `The platform answered HTTP ${res.status} with a body this app does not read.`);
    }
    if (res.status === 401 || res.status === 403)
      return fail(
        'key_refused',
        `The platform refused the provider key (HTTP ${res.status}). Copy it again from your Swan Inference provider page into Settings.`,
      );
    const json = readJson(raw, JSON_LIMITS.platform);
    return { ok: true, status: res.status, json: json.ok ? json.value : undefined };
  }
}

function chainView(c: z.infer<typeof chainSchema>): CollateralChainView {
  return {
    chainId: c.chain_id,
    chainName: c.chain_name ?? `chain ${c.chain_id}`,
    contractAddress: clip(c.contract_address, 128),
    tokenSymbol: c.token_symbol ?? '',
    ...(c.token_address ? { tokenAddress: c.token_address } : {}),
    minCollateral: c.min_collateral ?? 0,
    ...(c.explorer_url && /^https:\/\//.test(c.explorer_url) ? { explorerUrl: c.explorer_url } : {}),
    ...(c.faucet_url && /^https:\/\//.test(c.faucet_url) ? { faucetUrl: c.faucet_url } : {}),
  };
}

function unwrap(json: unknown): unknown {
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    const data = (json as { data?: unknown }).data;
    if (data && typeof data === 'object' && !Array.isArray(data)) return data;
  }
  return json;
}

/** The platform's own words of a refusal: `{error: {message}}` (as the Go CLI reads it), `{error}` or `{message}`. */
function platformWords(json: unknown): string {
  if (!json || typeof json !== 'object') return '';
  const o = json as { error?: unknown; message?: unknown };
  const e = o.error;
  const words =
    typeof e === 'string'
      ? e
      : e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string'
        ? (e as { message: string }).message
        : typeof o.message === 'string'
          ? o.message
          : '';
  return words ? ` (the platform says: "${clip(words, 300)}")` : '';
}

function fail(code: AccountFailureCode, message: string): AccountFailure {
  return { ok: false, code, message };
}

function refusal(a: { status: number; json: unknown }, what: string): AccountFailure {
  if (a.status === 404) return fail('platform_refused', `The platform does not offer ${what} at this address (HTTP 404). Check the network in Settings.`);
  return fail('platform_refused', `The platform refused ${what} (HTTP ${a.status})${platformWords(a.json)}. Nothing was changed.`);
}

function badAddress(): AccountFailure {
  return fail('address_invalid', 'That is not a wallet address: it starts with 0x and has 40 letters a–f and digits after it. Copy it again from your wallet.');
}

function ownerSet(current?: string): AccountFailure {
  return fail(
    'owner_address_set',
    `The owner address is set already${current ? ` (${current})` : ''} and the platform never changes it. The payout address can still be changed.`,
  );
}
