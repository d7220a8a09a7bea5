// Turns SQLite and file-system failures into what the owner needs to know: what happened to the
// usage database, and what to do about it. Also decides whether the connection is still usable
// (a lock passes; a damaged or vanished file needs a fresh connection). The ledger's coded errors live here too.
import { CodedError } from '../../shared/bridge-error';
import { SchemaTooNewError } from './migrations';

export type DbFailureKind = 'locked' | 'full' | 'read_only' | 'corrupt' | 'too_new' | 'unavailable';

export interface DbFailure {
  kind: DbFailureKind;
  /** Drop the connection and open the file again on the next retry. */
  reopen: boolean;
  /** Plain text for the owner: what happened and what to do. */
  message: string;
  /** The raw error, for the log. */
  detail: string;
}

function codeOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

export function describeDbFailure(file: string, err: unknown): DbFailure {
  const detail = err instanceof Error ? err.message : String(err);
  const code = codeOf(err);
  if (err instanceof SchemaTooNewError) return { kind: 'too_new', reopen: true, message: err.message, detail };
  if (code === 'ERR_DLOPEN_FAILED' || /bindings file|NODE_MODULE_VERSION|better_sqlite3\.node/.test(detail)) {
    return {
      kind: 'unavailable',
      reopen: true,
      message:
        `The SQLite module of this installation could not be loaded (${detail.split('\n')[0]}), so usage cannot be saved to ${file}. ` +
        'Reinstall the app (from a source checkout: npm rebuild better-sqlite3); usage records are held in memory meanwhile.',
      detail,
    };
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return {
      kind: 'locked',
      reopen: false,
      message: `The usage database ${file} is locked by another program (${detail}). Usage records are held in memory and written as soon as it is free; close any tool that has the file open.`,
      detail,
    };
  }
  if (code === 'SQLITE_FULL' || (code.startsWith('SQLITE_IOERR') && /no space/i.test(detail))) {
    return {
      kind: 'full',
      reopen: false,
      message: `The disk holding the usage database ${file} is full. Free some space; usage records are held in memory and written once there is room.`,
      detail,
    };
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || /read-only file system/i.test(detail)) {
    return {
      kind: 'read_only',
      reopen: true,
      message: `The disk holding the usage database ${file} is read-only (${detail}). Usage records are held in memory and written once it can be written again; make the disk writable (a disk the system set read-only after errors needs a check and a remount).`,
      detail,
    };
  }
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') {
    return {
      kind: 'corrupt',
      reopen: true,
      message:
        `The usage database ${file} is damaged (${detail}). The console keeps serving and holds new usage records in memory. ` +
        'Move the file aside (keep it if you want to try to recover it); a new database is created automatically and the held records are written to it.',
      detail,
    };
  }
  return {
    kind: 'unavailable',
    reopen: true,
    message: `The usage database ${file} cannot be opened or written (${detail}). Check that its folder exists and that your user may write to it; usage records are held in memory and written once it works again.`,
    detail,
  };
}

/** Why the database cannot be read: the failure's kind, or `closed` once the ledger was closed. */
export type LedgerUnavailableErrorCode = DbFailureKind | 'closed';

/** Thrown by queries while the database cannot be read; the message is meant for the owner. */
export class LedgerUnavailableError extends CodedError<LedgerUnavailableErrorCode> {
  override name = 'LedgerUnavailableError';
}

/** Why a value given to the ledger was refused: a time range, a report's bucket count, a price, the electricity price, a retention. */
export type LedgerValueErrorCode =
  'invalid_range' | 'range_reversed' | 'too_many_buckets' | 'invalid_price' | 'invalid_electricity_price' | 'invalid_retention';

/** A refused value (the caller's, not the database's); `field` names it where there are several (`inputPerM`, `currency`). */
export class LedgerValueError extends CodedError<LedgerValueErrorCode> {
  override name = 'LedgerValueError';
}
