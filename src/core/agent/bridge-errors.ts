// One place that gives an error thrown under a bridge handler its bridge code (src/shared/bridge-error.ts):
// the parts' own typed errors are mapped here, so they need not know about the bridge.
import { BridgeError } from '../../shared/bridge-error';
import { GatewayKeyError } from '../gateway/keys';
import { LedgerUnavailableError } from '../ledger/db-errors';

/** The error as a BridgeError, its message unchanged. */
export function toBridgeError(err: unknown): BridgeError {
  if (err instanceof BridgeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof GatewayKeyError) return new BridgeError(err.code === 'key_name_taken' ? 'already_exists' : 'invalid_args', message);
  if (err instanceof LedgerUnavailableError) return new BridgeError('unavailable', message);
  // The parts throw RangeError for a value out of range (a price, a time span, a retention).
  if (err instanceof RangeError) return new BridgeError('invalid_args', message);
  return new BridgeError('failed', message);
}
