// capYoungGeneration: in a process that keeps many young objects alive (as 64 streams do) in short turns, new space
// stops at the ceiling instead of growing to V8's 32 MB; without it, the same load grows it to 32 MB. Once V8 has
// shrunk new space (after a memory-reducing full GC), growth is on again and the next load reaches the freeze point.
import { describe, expect, it } from 'vitest';
import { runModuleScript } from '../support/node-script';

/** One short turn of a survivor-heavy load (the scripts below keep `keep` and `i`): 5,000 objects, half kept a while. */
const TURN = "for (let n = 0; n < 5000; n++, i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200000) keep.splice(0, 100000); }";
/** new_space's size in MB, as a script expression. */
const NEW_SPACE_MB = "v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576";

/**
 * new_space size (MB) after a survivor-heavy allocation loop in a fresh node process, with or without the
 * cap; `worker`: the ledger's checkpoint thread is started a quarter of the way in, the load paused until
 * it is online (V8 resets the growth factor when it sets up the thread's heap).
 */
function newSpaceAfterLoad(cap: boolean, worker = false): number {
  const script = `
    import v8 from 'node:v8';
    import fs from 'node:fs';
    import os from 'node:os';
    import path from 'node:path';
    import Database from 'better-sqlite3';
    import { WalCheckpointer } from './src/core/ledger/wal-checkpointer.ts';
    import { capYoungGeneration } from './src/core/young-generation.ts';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-yg-'));
    const file = path.join(dir, 'db.sqlite');
    new Database(file).pragma('journal_mode = WAL');
    ${cap ? 'capYoungGeneration(16);' : ''}
    const keep = [];
    let i = 0;
    const step = () => {
      ${TURN}
      if (${worker} && i === 1e6) {
        // The load waits while the thread starts (a minor GC in that window may double new space once,
        // young-generation.ts): what is checked is that the cap holds once the thread is online.
        process.once('worker', (w) => w.once('online', () => setImmediate(step)));
        new WalCheckpointer(file).start();
        return;
      }
      if (i < 4e6) setImmediate(step); // a server: short turns, the loop in between
      else {
        console.log(${NEW_SPACE_MB});
        fs.rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      }
    };
    step();`;
  return Number(runModuleScript(script));
}

/**
 * new_space sizes (MB) in a capped process: after a survivor-heavy load, after a heap snapshot (a full GC that
 * reduces memory: V8 shrinks new space), and after the same load again.
 */
function newSpaceAcrossShrink(): number[] {
  const script = `
    import v8 from 'node:v8';
    import { capYoungGeneration } from './src/core/young-generation.ts';
    const mb = () => ${NEW_SPACE_MB};
    capYoungGeneration(16);
    const keep = [];
    let i = 0;
    const load = (n) => new Promise((resolve) => {
      const end = i + n;
      const step = () => {
        ${TURN}
        if (i < end) setImmediate(step); else resolve();
      };
      step();
    });
    const sizes = [];
    await load(2e6);
    sizes.push(mb());
    keep.length = 0;
    const snap = v8.getHeapSnapshot();
    snap.resume();
    await new Promise((r) => snap.on('end', r));
    sizes.push(mb());
    await load(2e6);
    sizes.push(mb());
    console.log(JSON.stringify(sizes));`;
  return JSON.parse(runModuleScript(script)) as number[];
}

describe('capYoungGeneration', () => {
  it('keeps new space at the ceiling under a survivor-heavy load; without it the load grows it to 32 MB', () => {
    expect(newSpaceAfterLoad(false)).toBe(32);
    expect(newSpaceAfterLoad(true)).toBeLessThanOrEqual(16);
  }, 60_000);

  it('keeps the ceiling after the checkpoint thread starts (V8 sets the growth factor back when it makes a heap)', () => {
    expect(newSpaceAfterLoad(false, true)).toBe(32);
    expect(newSpaceAfterLoad(true, true)).toBeLessThanOrEqual(16);
  }, 60_000);

  it('switches growth on again once V8 has shrunk new space, so the next load grows it back to the freeze point', () => {
    const [loaded, shrunk, reloaded] = newSpaceAcrossShrink();
    expect(loaded).toBeLessThanOrEqual(16);
    expect(shrunk).toBeLessThan(loaded as number); // else nothing here tests the switch back on
    // Left off, new space would stay at its shrunk size for good, with a scavenge every few hundred KB.
    expect(reloaded).toBeGreaterThanOrEqual(4);
    expect(reloaded).toBeLessThanOrEqual(16);
  }, 60_000);
});
