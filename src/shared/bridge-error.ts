// Why a bridge call was refused or failed, as a stable code beside the owner's plain message. Both
// transports (Electron IPC and the console WebSocket) carry it in the reply; the renderer gets it back
// as `BridgeError.code`. The message is for people; code is what programs and tests branch on.
// Its base, CodedError, is the one base of the parts' own coded errors too.

export const BRIDGE_ERROR_CODES = [
  /** The channel is not one of INVOKE_CHANNELS (the page and the agent are out of step). */
  'unknown_channel',
  /** The arguments do not match the channel's schema, are too large or are not plain data; or a value is out of range. */
  'invalid_args',
  /** The console socket got something that is not a request: not JSON, not {id, channel, args}, or binary. */
  'malformed',
  /** Too many calls are running at once on one console socket. */
  'too_many',
  /** The caller is not the app's own page (IPC sender check). */
  'refused',
  /** A named model or gateway key is not known here. */
  'not_found',
  /** A gateway key of that name already exists. */
  'already_exists',
  /** A part the call needs is down right now: the usage ledger, the GPU process list. */
  'unavailable',
  /** Not in this mode: downloads and installs of updates are the desktop app's. */
  'not_supported',
  /** A step must come first: the provider key before onboarding ends, a model switched on before it is tried. */
  'not_ready',
  /** Too much of this is running already (test prompts); wait for one to finish. */
  'busy',
  /** Anything else; the message says what happened. */
  'failed',
  /**
   * Only the owner may allow this (the provider key to a new host or over plain ws:// / http:// to
   * another machine, a new gateway key, an engine outside this machine's network): the error carries
   * `confirmation`, the change is held until the owner approves it outside the console.
   */
  'OWNER_CONFIRMATION_REQUIRED',
  /** The address is in a range nothing may be sent to (link-local, cloud metadata, unspecified). */
  'address_refused',
  /** The operating system allows this only to an administrator (a GPU's power limit): the message says the command. */
  'needs_admin',
] as const;

export type BridgeErrorCode = (typeof BRIDGE_ERROR_CODES)[number];

export function isBridgeErrorCode(x: unknown): x is BridgeErrorCode {
  return typeof x === 'string' && (BRIDGE_ERROR_CODES as readonly string[]).includes(x);
}

/**
 * An error with a stable code beside its plain message, and the field at fault where there is one
 * (dotted: `window.messages`, `inputPerM`). The parts' typed errors extend it, each with its own code
 * union (docs/error-codes.md); BridgeError below is one.
 */
export class CodedError<C extends string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** What needs the owner's approval: the provider key's destination, a gateway key, an engine endpoint. */
export type ApprovalKind = 'key_destination' | 'gateway_key' | 'engine_endpoint' | 'fleet_token' | 'payout_address';

/** How an approval ended (the `approval` bridge event): `failed` = approved, but applying the change failed. */
export type ApprovalStatus = 'approved' | 'denied' | 'expired' | 'failed';

/** What an OWNER_CONFIRMATION_REQUIRED refusal carries: the held change and how the owner approves it. */
export interface OwnerConfirmation {
  approvalId: string;
  /** The short code the owner types (`ABCD-EFGH`). */
  code: string;
  kind: ApprovalKind;
  /** One sentence: what happens when approved. */
  summary: string;
  /** Hosts (host:port) that would receive the provider key for the first time, or the engine's host. */
  hosts: string[];
  /** Hosts the key would reach over plain ws:// or http:// off this machine (not encrypted). */
  insecure: string[];
  /** For a headless agent: the command that approves it (`swan-provider approve ABCD-EFGH`). */
  approveCommand: string;
  /** Epoch ms; after it the approval is `expired` and nothing changes. */
  expiresAt: number;
  /**
   * A credential's approval (gateway key, fleet token): the secret the call after the approval brings. Only
   * in the refusal's reply to the caller that asked: never in an event, a log line or the approvals folder.
   */
  grant?: string;
}

/** The `approval` bridge event's payload. */
export interface ApprovalView {
  approvalId: string;
  kind: ApprovalKind;
  status: ApprovalStatus;
  /** Why applying an approved change failed. */
  error?: string;
}

/** An error with a bridge code: thrown by handlers, and rebuilt from a reply on the renderer's side. */
export class BridgeError extends CodedError<BridgeErrorCode> {
  override name = 'BridgeError';

  constructor(
    code: BridgeErrorCode,
    message: string,
    field?: string,
    /** With OWNER_CONFIRMATION_REQUIRED: the held change and how to approve it. */
    readonly confirmation?: OwnerConfirmation,
  ) {
    super(code, message, field);
  }
}

/** The confirmation an error carries (OWNER_CONFIRMATION_REQUIRED), for the reply envelope. */
export function confirmationOf(err: unknown): OwnerConfirmation | undefined {
  return err instanceof BridgeError ? err.confirmation : undefined;
}

/** The code an error travels with: its own when it carries a bridge code, else `failed`. */
export function bridgeErrorCode(err: unknown): BridgeErrorCode {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return isBridgeErrorCode(code) ? code : 'failed';
}
