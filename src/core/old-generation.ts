// A limit on how far V8 lets the old generation grow before its next full (mark-compact) GC, for the
// long-running agent. Under the bench's stream load the agent's live heap is small (old space holds 14-16 MB
// after a full GC), but every request leaves what it held across a few scavenges in old space, dead when it
// ends, and V8's own growing factor (picked from the GC's speed, up to 4x for a small heap) let old space climb
// 20 -> 52 MB and RSS 108 -> 140 MB over eight 64-stream turns, a full GC only every few turns. With the factor
// at 1.25 (at least V8's smallest step, 8 MB) old space stayed at 20-25 MB and RSS at 100-107 MB, at most one
// incremental full GC a turn, the relay's latency within the turn-to-turn spread (docs/benchmarks.md, issue 18,
// tenth pass). `node --heap-growing-percent` would set it, but the agent is started without node flags; V8
// reads the flag each time it sets the next limit (after every full GC), so setting it at run time works.
import v8 from 'node:v8';

/**
 * Sets V8's old-generation growing factor to 1 + `percent` / 100 for the rest of the process (the flag is
 * process-wide, worker threads included). `percent` is a whole number from 1 to 300.
 */
export function limitOldGenerationGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 1 || percent > 300) throw new RangeError(`percent must be a whole number from 1 to 300 (got ${percent})`);
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
}
