// One place that gives an error thrown under a bridge handler its bridge code (src/shared/bridge-error.ts):
// the parts' own typed errors are mapped here, so they need not know about the bridge.
import { BridgeError } from '../../shared/bridge-error';
import { GatewayKeyError } from '../gateway/keys';
import { LedgerUnavailableError, LedgerValueError } from '../ledger/db-errors';
import { DemandError, type DemandErrorCode } from '../platform/demand';
import type { BridgeErrorCode } from '../../shared/bridge-error';
import type { FleetErrorCode } from '../../shared/fleet';
import { FleetError } from '../fleet/tokens';
import { GpuChoiceError } from '../engines/gpu-holds';
import { PowerLimitError, type PowerLimitErrorCode } from '../gpu/power-limit';

/** A refused pull or "serve this", as the console branches on it. */
const DEMAND_CODES: Record<DemandErrorCode, BridgeErrorCode> = {
  not_local_engine: 'invalid_args',
  not_model_name: 'invalid_args',
  not_network_model: 'not_found',
  not_on_disk: 'not_found',
  already_mapped: 'already_exists',
  no_models_file: 'unavailable',
};

/** A power limit not set, as the console branches on it (the message says what to do). */
const POWER_CODES: Record<PowerLimitErrorCode, BridgeErrorCode> = {
  no_tool: 'not_supported',
  not_supported: 'not_supported',
  needs_admin: 'needs_admin',
  out_of_range: 'invalid_args',
  no_gpu: 'not_found',
  tool_failed: 'failed',
};

/** A refused fleet call (adding a rig, a token), as the console branches on it. */
const FLEET_CODES: Record<FleetErrorCode, BridgeErrorCode> = {
  rig_unreachable: 'unavailable',
  rig_refused_token: 'invalid_args',
  rig_bad_answer: 'failed',
  rig_is_self: 'already_exists',
  rig_duplicate: 'already_exists',
  fleet_address_invalid: 'invalid_args',
  fleet_address_forbidden: 'invalid_args',
  rig_not_found: 'not_found',
  fleet_token_invalid: 'invalid_args',
  fleet_token_name_invalid: 'invalid_args',
  fleet_token_name_taken: 'already_exists',
  fleet_token_not_found: 'not_found',
  rig_read_only: 'not_supported',
};

/** The error as a BridgeError, its message unchanged. */
export function toBridgeError(err: unknown): BridgeError {
  if (err instanceof BridgeError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof GatewayKeyError) return new BridgeError(err.code === 'key_name_taken' ? 'already_exists' : 'invalid_args', message);
  if (err instanceof LedgerUnavailableError) return new BridgeError('unavailable', message);
  if (err instanceof DemandError) return new BridgeError(DEMAND_CODES[err.code], message, err.field);
  if (err instanceof FleetError) return new BridgeError(FLEET_CODES[err.code], message, err.field);
  if (err instanceof PowerLimitError) return new BridgeError(POWER_CODES[err.code], message, err.code === 'out_of_range' ? 'watts' : undefined);
  if (err instanceof GpuChoiceError) return new BridgeError(err.code === 'gpu_unknown' ? 'not_found' : 'not_supported', message, 'index');
  // A value out of range: the ledger's (a price, a time span, a retention), or any RangeError.
  if (err instanceof LedgerValueError) return new BridgeError('invalid_args', message, err.field);
  if (err instanceof RangeError) return new BridgeError('invalid_args', message);
  return new BridgeError('failed', message);
}
