// What the Payout & activation card and `swan-provider account` read: the provider's addresses on the platform
// (GET /api/v1/provider/me), the collateral chains (GET /api/v1/provider/collateral/contract), and the answer
// to each change (the beneficiary, the one-time owner address, asking for approval). A refusal carries a
// stable code beside its plain words (docs/error-codes.md, "provider account").

export const ACCOUNT_FAILURE_CODES = [
  /** No provider key is set: nothing can be asked. */
  'no_key',
  /** The platform could not be reached (no network, DNS, timeout). */
  'platform_unreachable',
  /** The platform refused the provider key (401 / 403). */
  'key_refused',
  /** The owner address is set already; the platform never changes it. */
  'owner_address_set',
  /** Not a wallet address (0x and 40 hexadecimal digits). */
  'address_invalid',
  /** An approval was asked for already (409). */
  'approval_already_requested',
  /** The platform refused the change for another reason; its words are in the message. */
  'platform_refused',
  /** The platform answered with something we do not read. */
  'bad_answer',
] as const;
export type AccountFailureCode = (typeof ACCOUNT_FAILURE_CODES)[number];

export type AccountFailure = { ok: false; code: AccountFailureCode; message: string };
export type AccountRead<T> = { ok: true; value: T } | AccountFailure;

export interface ProviderAddressesView {
  providerId?: string;
  /** Set once, never changed; '' = not set yet. */
  ownerAddress: string;
  workerAddress: string;
  /** Where payouts go; '' = not set (the platform then pays the owner address). */
  beneficiaryAddress: string;
}

export interface CollateralChainView {
  chainId: number;
  chainName: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAddress?: string;
  minCollateral: number;
  explorerUrl?: string;
  faucetUrl?: string;
}

export interface ProviderAccountView {
  checkedAt: number;
  addresses: AccountRead<ProviderAddressesView>;
  collateral: AccountRead<CollateralChainView[]>;
}

/** The answer to asking for approval (POST /api/v1/provider/request-approval). */
export interface ApprovalRequestView {
  status: string;
  message: string;
  requestedAt?: string;
}
