// One place that gives an error thrown under a bridge handler its bridge code (src/shared/bridge-error.ts):
// the parts' own typed errors are mapped here, so they need not know about the bridge.
import { BridgeError } from '../../shared/bridge-error';
import { GatewayKeyError } from '../gateway/keys';
import { LedgerUnavailableError, LedgerValueError } from '../ledger/db-errors';
import { DemandError, type DemandErrorCode } from '../platform/demand';
import type { BridgeErrorCode } from '../../shared/bridge-error';

/** A refused pull or "serve this", as the console branches on it. */
const DEMAND_CODES: Record<DemandErrorCode, BridgeErrorCode> = {
  not_local_engine: 'invalid_args',
  not_model_name: 'invalid_args',
  not_network_model: 'not_found',
  not_on_disk: 'not_found',
  already_mapped: 'already_exists',
  no_models_file: 'unavailable',
};

/** The error as a BridgeError, its message unchanged. */
export function toBridgeError(err: unknown): BridgeError {
  if (err instanceof BridgeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof GatewayKeyError) return new BridgeError(err.code === 'key_name_taken' ? 'already_exists' : 'invalid_args', message);
  if (err instanceof LedgerUnavailableError) return new BridgeError('unavailable', message);
  if (err instanceof DemandError) return new BridgeError(DEMAND_CODES[err.code], message, err.field);
  // A value out of range: the ledger's (a price, a time span, a retention), or any RangeError.
  if (err instanceof LedgerValueError) return new BridgeError('invalid_args', message, err.field);
  if (err instanceof RangeError) return new BridgeError('invalid_args', message);
  return new BridgeError('failed', message);
}
