// A ceiling on V8's young generation for the long-running agent. Under a steady stream load V8 keeps
// doubling the young generation (new space) up to its default maximum, 32 MB (two 16 MB semi-spaces),
// because everything a request holds while it streams survives a scavenge or two. The bench measured
// what that buys: nothing in CPU per chunk, and about 16 MB of RSS (docs/benchmarks.md, issue 18).
// `node --max-semi-space-size` would set the ceiling but is read only when the heap is made, and the
// agent is started as `swan-provider run` / `node bin/swan-provider.js run`, without node flags. So this
// watches minor GCs and, once new space is at a quarter of `mb`, switches its growth off (V8 reads
// --semi-space-growth-factor each time it grows new space; 1 means it stays the size it is), and on again
// once V8 has shrunk it. The quarter leaves room for the doublings that happen before a GC reaches the
// check (LATE_DOUBLINGS). V8 puts a growth factor below 2 back to 2 whenever it sets up a heap, so starting a
// worker thread (the ledger's checkpoint thread) would lift the ceiling: the flag is set again when any
// worker is online (process 'worker' event) and after every minor GC while growth is off; a doubling in
// between fits in the same room. The cap can only hold what it finds: loading the agent's code alone grows new
// space to 16 MB, so the entry (bin/swan-provider.js, bin/load-agent.js) keeps growth off while the code loads (test/integration/cli/
// entry-young-generation.test.ts); since then the bench's agent stays at 4-6 MB of new space under load.
import v8 from 'node:v8';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';

const MB = 1024 * 1024;
/** V8's own --semi-space-growth-factor. */
const DEFAULT_GROWTH_FACTOR = 2;
/** One watcher per process (the flag is process-wide). */
let watching = false;
/** Whether growth is switched off now (new space at the ceiling). */
let frozen = false;

function setGrowth(on: boolean): void {
  v8.setFlagsFromString(`--semi-space-growth-factor=${on ? DEFAULT_GROWTH_FACTOR : 1}`);
}

/** After a worker thread has started (V8 then resets the factor): growth off again if the cap has it off. */
function reassert(): void {
  if (watching && frozen) setGrowth(false);
}

/** A worker is starting: its heap is set up before it is online; growth goes off again then. */
const onWorker = (worker: Worker): void => {
  worker.once('online', reassert);
};

function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * How many doublings of new space may happen after the one that reached the freeze point and before the
 * check sees it: V8 reports a GC to JavaScript afterwards (a PerformanceObserver callback, run when the loop
 * gets to it), and under a survivor-heavy load one or two more scavenges can double new space again first
 * (measured: a ceiling of 4 or 8 MB still ended at 16 MB in the bench, and one of 16 MB at 32 MB now and then).
 */
const LATE_DOUBLINGS = 2;

/**
 * Keeps the young generation at most `mb`: growth is switched off once new space reaches `mb` / 4, so the
 * doublings that can slip in before the check (LATE_DOUBLINGS) still end at `mb` or below, and on again
 * when V8 has shrunk it below that (it does after idle periods; left off, new space would then stay small
 * for good, with a scavenge every few ms under load). Returns a stop function.
 */
export function capYoungGeneration(mb: number): () => void {
  if (watching) return () => undefined;
  watching = true;
  frozen = false;
  const freezeAt = (mb * MB) / 2 ** LATE_DOUBLINGS;
  const check = (): void => {
    const atCap = newSpaceBytes() >= freezeAt;
    if (!atCap && !frozen) return;
    frozen = atCap;
    setGrowth(!atCap);
  };
  check();
  const obs = new PerformanceObserver((list) => {
    if (list.getEntries().some((e) => (e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR)) check();
  });
  obs.observe({ entryTypes: ['gc'] });
  process.on('worker', onWorker);
  return () => {
    obs.disconnect();
    process.off('worker', onWorker);
    // The flag is process-wide: stopped, V8 grows new space as it would have without the cap.
    if (frozen) setGrowth(true);
    frozen = false;
    watching = false;
  };
}
