import { describe, expect, it } from 'vitest';
import { describeDbFailure } from '../../../src/core/ledger/db-errors';
import { SchemaTooNewError } from '../../../src/core/ledger/migrations';

const F = '/home/me/.swan/ledger.sqlite';
const sqliteError = (code: string, message: string): Error => Object.assign(new Error(message), { code });

describe('what the owner is told about a database failure', () => {
  it('names the file, the cause and the next step for each kind', () => {
    const cases: Array<[unknown, string, boolean, RegExp]> = [
      [sqliteError('SQLITE_BUSY', 'database is locked'), 'locked', false, /locked by another program .*close any tool/],
      [sqliteError('SQLITE_NOTADB', 'file is not a database'), 'corrupt', true, /damaged .*Move the file aside/],
      [sqliteError('SQLITE_CORRUPT', 'database disk image is malformed'), 'corrupt', true, /damaged/],
      [sqliteError('SQLITE_FULL', 'database or disk is full'), 'full', false, /disk .* is full\. Free some space/],
      [sqliteError('SQLITE_CANTOPEN', 'unable to open database file'), 'unavailable', true, /Check that its folder exists/],
      [new SchemaTooNewError(9, 3), 'too_new', true, /newer version .*Update the console/],
      [new Error('Could not locate the bindings file. Tried: …'), 'unavailable', true, /SQLite module .* could not be loaded.*npm rebuild better-sqlite3/],
    ];
    for (const [err, kind, reopen, text] of cases) {
      const f = describeDbFailure(F, err);
      expect([f.kind, f.reopen]).toEqual([kind, reopen]);
      expect(f.message).toMatch(text);
      if (kind !== 'too_new') expect(f.message).toContain(F);
    }
  });
});
