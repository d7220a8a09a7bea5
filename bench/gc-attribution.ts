// Which relayed chunks waited through a GC pause of the relay process: a chunk is "hit" when one of the
// process's pauses (the loop probe's [start, ms] list, wall clock) overlaps the span from the engine's write
// of the chunk to the reader having it. Splitting a path's latencies by that says how much of its tail is GC
// and how much would be there without it. A diagnostic of the bench; nothing of it runs in the agent.
import { round, summarize, type Summary } from './stats';
import type { StreamTrace } from './trace';

/** GC pauses as [start ms, duration ms], in any order. */
export type Pauses = Array<[number, number]>;

export interface GcHits {
  chunks: number;
  /** Share of the chunks that overlapped a pause (0..1). */
  hitShare: number;
  /** Of the slowest 1 % of the chunks (the path's own tail), the share that overlapped a pause. */
  tailHitShare: number;
  all: Summary;
  /** The chunks no pause overlapped. */
  clear: Summary;
  pauses: number;
  pauseMs: number;
}

/** Latencies of one turn split by whether a pause overlapped each chunk's span. */
export interface Split {
  hit: number[];
  clear: number[];
  pauses: number;
  pauseMs: number;
}

export function emptySplit(): Split {
  return { hit: [], clear: [], pauses: 0, pauseMs: 0 };
}

/** Adds one turn's traces to `into`, against the pauses the relay process had in that turn. */
export function splitByPauses(traces: StreamTrace[], pauses: Pauses, into: Split): void {
  const sorted = [...pauses].sort((a, b) => a[0] - b[0]);
  const starts = sorted.map((p) => p[0]);
  const ends = sorted.map((p) => p[0] + p[1]);
  // The longest pause bounds how far back a pause may have started and still reach a span.
  const longest = Math.max(0, ...sorted.map((p) => p[1]));
  into.pauses += sorted.length;
  into.pauseMs = round(into.pauseMs + sorted.reduce((a, p) => a + p[1], 0), 1);
  for (const t of traces) {
    for (let i = 0; i < t.latencies.length; i++) {
      const lat = t.latencies[i] as number;
      const from = t.writtenAt[i] as number;
      const to = from + lat;
      let hit = false;
      // First pause starting after `from - longest`, then every one starting before `to`.
      for (let k = firstAtOrAfter(starts, from - longest); k < sorted.length && (starts[k] as number) < to; k++) {
        if ((ends[k] as number) > from) {
          hit = true;
          break;
        }
      }
      (hit ? into.hit : into.clear).push(lat);
    }
  }
}

function firstAtOrAfter(sorted: number[], v: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export function summarizeSplit(s: Split): GcHits {
  const all = summarize([...s.hit, ...s.clear]);
  const ranked = [...s.hit.map((lat) => ({ lat, hit: true })), ...s.clear.map((lat) => ({ lat, hit: false }))].sort((a, b) => b.lat - a.lat);
  const tail = ranked.slice(0, Math.max(1, Math.floor(ranked.length / 100)));
  return {
    chunks: all.n,
    hitShare: round(s.hit.length / Math.max(1, all.n), 3),
    tailHitShare: round(tail.filter((c) => c.hit).length / tail.length, 3),
    all,
    clear: summarize(s.clear),
    pauses: s.pauses,
    pauseMs: s.pauseMs,
  };
}
