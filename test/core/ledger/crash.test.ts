// SIGKILL in the middle of a burst of writes: every record whose record() had returned (its id was
// printed) must be in the database afterwards, and the file must open clean.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/core/ledger/ledger';
import { tempDir } from '../../support/ledger/helpers';
import { rollupDrift } from '../../support/ledger/rollups';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const writer = path.join(root, 'test', 'support', 'ledger', 'crash-writer.ts');

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

/** Runs the writer, kills it with SIGKILL once `killAfter` ids are printed; returns every printed id. */
function burstAndKill(file: string, killAfter: number): Promise<{ printed: string[]; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', writer, file], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let killed = false;
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the writer printed only ${out.split('\n').length - 1} ids in 25 s; stderr: ${err}`));
    }, 25_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      if (!killed && out.split('\n').length - 1 >= killAfter) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(guard);
      const lines = out.split('\n');
      lines.pop(); // a last line without its newline was not fully printed
      resolve({ printed: lines, signal, stderr: err });
    });
  });
}

describe('crash safety', () => {
  it('SIGKILL mid-burst loses no record whose record() returned, and the file opens clean', async () => {
    const file = path.join(dir, 'ledger.sqlite');
    let expected: string[] = [];
    // Two rounds: the second kill lands on a file that already went through a crash recovery.
    for (const killAfter of [400, 700]) {
      const { printed, signal, stderr } = await burstAndKill(file, killAfter);
      expect(signal, stderr).toBe('SIGKILL');
      expect(printed.length).toBeGreaterThanOrEqual(killAfter);
      expected = expected.concat(printed);

      const db = new Database(file);
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        const stored = new Set(db.prepare('SELECT request_id FROM usage').pluck().all() as string[]);
        const missing = expected.filter((id) => !stored.has(id));
        expect(missing).toEqual([]);
        // The rollups moved in the same transactions as the rows.
        expect(db.prepare('SELECT sum(requests) FROM usage_15m').pluck().get()).toBe(stored.size);
        expect(rollupDrift(db)).toEqual([]);
      } finally {
        db.close();
      }
    }
    const ledger = Ledger.open(file);
    try {
      expect(ledger.health()).toMatchObject({ ok: true, pending: 0 });
      expect(ledger.totals(0, Date.now() + 1).requests).toBeGreaterThanOrEqual(expected.length);
    } finally {
      ledger.close();
    }
  });
});
