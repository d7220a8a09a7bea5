// Diagnostic preload for the fault soak's heap mode (SOAK_HEAP_SNAPSHOTS=dir; never loaded otherwise): started
// in the agent through NODE_OPTIONS=--import, it answers SIGWINCH with a full collection, a line of
// process.memoryUsage() in <dir>/memory.jsonl and a heap snapshot <dir>/<label>.heapsnapshot, the label read
// from <dir>/next-label (written by the soak just before the signal); a label ending in ".mem" gets the
// collection and the memory line only, no snapshot (writing one leaves the process's RSS higher for good).
// It changes nothing else in the agent.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';

const dir = process.env.SOAK_HEAP_DIR;
if (dir) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  process.on('SIGWINCH', () => {
    let label = 'snapshot';
    try {
      label = fs.readFileSync(path.join(dir, 'next-label'), 'utf8').trim() || label;
    } catch {
      // no label: the default name
    }
    gc();
    gc();
    const m = process.memoryUsage();
    // Per V8 space, what it has committed and uses (heapTotal is their sum): which space grows, if any.
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
    if (!label.endsWith('.mem')) v8.writeHeapSnapshot(path.join(dir, `${label}.heapsnapshot`));
    fs.appendFileSync(path.join(dir, 'memory.jsonl'), JSON.stringify({ label, at: new Date().toISOString(), ...m, spaces }) + '\n');
    fs.writeFileSync(path.join(dir, `${label}.done`), '');
  });
}
