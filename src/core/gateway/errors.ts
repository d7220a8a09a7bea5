// How a request that did not end well is told to each kind of client: stream-v1's {code, kind}
// (seed 003's closed set of kinds), seed 002's four codes, and OpenAI-style HTTP errors.
import type { InferenceResult } from '../inference/runner';

/** Seed 003 ErrorKind: adding one is minor, renaming or removing one is a new major protocol. */
export type ErrorKind = 'invalid' | 'model_not_loaded' | 'rejected' | 'cancelled' | 'internal';

export interface GatewayError {
  code: string;
  kind: ErrorKind;
  message: string;
  /** HTTP status for the OpenAI endpoint. */
  status: number;
  retryAfterMs?: number;
}

/** The error a finished-but-not-ok InferenceResult stands for. */
export function resultError(r: InferenceResult): GatewayError {
  const message = r.error ?? `the request ended with status ${r.statusCode}`;
  const retry = r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {};
  if (r.status === 'cancelled' || r.kind === 'cancelled') return { code: 'cancelled', kind: 'cancelled', message, status: 499 };
  if (r.kind === 'model_not_loaded') return { code: 'model_not_loaded', kind: 'model_not_loaded', message, status: 404 };
  if (r.status === 'rejected' || r.kind === 'rejected')
    return { code: r.statusCode === 429 ? 'rate_limited' : 'rejected', kind: 'rejected', message, status: r.statusCode === 429 ? 429 : 503, ...retry };
  if (r.kind === 'invalid') return { code: 'invalid_request', kind: 'invalid', message, status: 400 };
  // The engine refused the request itself: the caller's input (bad parameter, unknown model on the engine).
  if (r.statusCode === 404)
    return { code: 'model_not_loaded', kind: 'model_not_loaded', message: `the engine does not serve this model: ${message}`, status: 404 };
  if (r.statusCode >= 400 && r.statusCode < 500 && r.statusCode !== 408)
    return { code: 'invalid_request', kind: 'invalid', message: `the engine refused the request: ${message}`, status: 400 };
  return { code: 'engine_error', kind: 'internal', message, status: r.statusCode >= 500 ? r.statusCode : 502 };
}

/** Seed 002 codes: auth_error | rate_limit | provider_error | invalid_request. */
export function relayCode(e: GatewayError): 'rate_limit' | 'provider_error' | 'invalid_request' {
  if (e.kind === 'rejected') return 'rate_limit';
  if (e.kind === 'invalid') return 'invalid_request';
  return 'provider_error';
}

/** OpenAI error `type` for an HTTP status. */
export function openAiType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 400 && status < 500) return 'invalid_request_error';
  return 'api_error';
}
