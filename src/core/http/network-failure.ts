// Why a request to another machine failed, in plain words and with a stable code, never Node's raw text
// ("getaddrinfo ENOTFOUND api.swanchain.io", "fetch failed"): the owner reads what happened and what to do.
// Node's fetch hides the system error in `cause` (its `code`: ENOTFOUND, ECONNREFUSED…); an abort by
// AbortSignal.timeout is a TimeoutError.

export type NetworkFailureCode = 'offline_or_dns' | 'refused' | 'timeout' | 'reset' | 'tls' | 'other';

export interface NetworkFailure {
  code: NetworkFailureCode;
  /** A clause that fits after "could not be reached: ". */
  words: string;
}

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN']);
const RESET = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function systemCode(e: unknown): string | undefined {
  for (let cur = e as { code?: unknown; cause?: unknown } | undefined, depth = 0; cur && depth < 4; cur = cur.cause as typeof cur, depth++) {
    if (typeof cur.code === 'string') return cur.code;
  }
  return undefined;
}

export function networkFailure(e: unknown, host: string, timeoutMs: number): NetworkFailure {
  const name = (e as Error | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return { code: 'timeout', words: `${host} did not answer within ${Math.round(timeoutMs / 1000)} s` };
  const code = systemCode(e) ?? '';
  if (DNS.has(code))
    return { code: 'offline_or_dns', words: `the name ${host} could not be looked up: this machine looks offline, or its DNS does not answer` };
  if (code === 'ECONNREFUSED') return { code: 'refused', words: `nothing answers at ${host}` };
  if (RESET.has(code)) return { code: 'reset', words: `the connection to ${host} was cut` };
  if (/^(?:ERR_TLS|CERT_|UNABLE_TO_VERIFY|DEPTH_ZERO|SELF_SIGNED)/.test(code))
    return { code: 'tls', words: `the secure connection to ${host} failed (its certificate was not accepted)` };
  return { code: 'other', words: `the connection to ${host} failed` };
}
