// A limit on how far V8 lets the old generation grow before its next full (mark-compact) GC, for the
// long-running agent. Under the bench's stream load the agent's live heap is small (old space holds about
// 14-16 MB after a full GC), but every request leaves promoted garbage behind (what a stream held across a
// few scavenges), and V8's dynamic growing factor (up to 4x for a small heap that is not GC-bound) lets old
// space reach about twice the live size before the next full GC: old space 24 -> 44 MB and RSS 102 -> 131 MB
// over a bench run, a full GC only every few turns. With the factor at 1.25 old space stayed at 20-25 MB and
// RSS at 98-107 MB, one full GC a turn (incremental, max 5.1 ms; the relay's p50/p99 did not move:
// docs/benchmarks.md, issue 18, tenth pass). `node --heap-growing-percent` would set it, but the agent is
// started without node flags; V8 reads the flag each time it sets the next limit (after every full GC), so
// setting it at run time works from the next full GC on.
import v8 from 'node:v8';

/**
 * Sets V8's old-generation growing factor to 1 + `percent` / 100 for the rest of the process (the flag is
 * process-wide, worker threads included). `percent` is a whole number from 1 to 300.
 */
export function limitOldGenerationGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 1 || percent > 300) throw new RangeError(`percent must be a whole number from 1 to 300 (got ${percent})`);
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
