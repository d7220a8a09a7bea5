// Relay overhead and time to first token, each path measured in the same run: the engine's stream read
// directly by the harness (baseline), relayed by the agent, and relayed by the minimal forwarder.
// Paths take turns (baseline, agent, forwarder, then again) so slow drifts of the machine hit all three.
import type { StepPhase } from './bench-engine';
import { concurrentStreams, PATHS, streamVia, type PathName } from './paths';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { round, ratio, summarize, type Summary } from './stats';
import { ttft, type StreamTrace } from './trace';
import { emptySplit, splitByPauses, summarizeSplit, type GcHits, type Pauses, type Split } from './gc-attribution';

export interface PathComparison {
  direct: Summary;
  agent: Summary;
  forwarder: Summary;
  /** agent minus baseline, ms */
  addedP50: number;
  addedP99: number;
  /** agent / baseline */
  ratioP50: number;
  ratioP99: number;
  forwarderAddedP50: number;
  forwarderAddedP99: number;
}

/** What the loop probe (bench/loop-probe.mjs) saw in a relay process during one measured turn. */
export interface LoopFigures {
  windowMs: number;
  utilization: number;
  /** Event-loop delay (ms, 1 ms resolution included). */
  delay: { count: number; p50: number; p90: number; p99: number; p999: number; max: number };
  gc: Record<string, { count: number; totalMs: number; maxMs: number }>;
  longGc: Array<[string, number]>;
  /** Every GC pause of the window, [start ms on the wall clock, ms]. */
  pauses?: Pauses;
  cpuMs: number;
  /** CPU time of the main thread alone (Linux). */
  mainCpuMs?: number;
  rssMb: number;
  /** V8 heap spaces' reserved sizes (MB) and memory outside the heap, at the end of the window. */
  spacesMb?: Record<string, number>;
  externalMb?: number;
  /** Chunks relayed in the window (set by the bench). */
  chunks?: number;
}

/** The loop figures of one path over its turns: delay percentiles are the worst turn's, GC is summed. */
export interface LoopSummary {
  turns: number;
  utilization: number;
  delayP50: number;
  delayP99: number;
  delayP999: number;
  delayMax: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
  /** GC pauses over 1 ms during the turns. */
  gcOver1ms: number;
  /** GC pause time by kind (minor = scavenge, major = mark-compact), summed. */
  gcByKind: Record<string, { count: number; totalMs: number; maxMs: number }>;
  /** Process CPU time (user + system) per relayed chunk, µs. */
  cpuUsPerChunk: number;
  /** The main thread's share of it, µs per chunk (Linux); the rest is V8's helper threads and workers. */
  mainCpuUsPerChunk?: number;
  rssMb: number;
  /** The heap spaces and external memory of the turn with the highest RSS. */
  spacesMb?: Record<string, number>;
  externalMb?: number;
}

function byKind(turns: LoopFigures[]): LoopSummary['gcByKind'] {
  const out: LoopSummary['gcByKind'] = {};
  for (const t of turns) {
    for (const [k, g] of Object.entries(t.gc)) {
      const o = (out[k] ??= { count: 0, totalMs: 0, maxMs: 0 });
      o.count += g.count;
      o.totalMs = round(o.totalMs + g.totalMs, 1);
      o.maxMs = Math.max(o.maxMs, g.maxMs);
    }
  }
  return out;
}

export function summarizeLoop(turns: LoopFigures[]): LoopSummary | undefined {
  if (turns.length === 0) return undefined;
  const max = (f: (t: LoopFigures) => number): number => Math.max(...turns.map(f));
  const gcs = turns.flatMap((t) => Object.values(t.gc));
  const chunks = Math.max(
    1,
    turns.reduce((a, t) => a + (t.chunks ?? 0), 0),
  );
  return {
    turns: turns.length,
    utilization: round(turns.reduce((a, t) => a + t.utilization, 0) / turns.length, 3),
    delayP50: max((t) => t.delay.p50),
    delayP99: max((t) => t.delay.p99),
    delayP999: max((t) => t.delay.p999),
    delayMax: max((t) => t.delay.max),
    gcCount: gcs.reduce((a, g) => a + g.count, 0),
    gcTotalMs: round(
      gcs.reduce((a, g) => a + g.totalMs, 0),
      1,
    ),
    gcMaxMs: round(Math.max(0, ...gcs.map((g) => g.maxMs)), 2),
    gcOver1ms: turns.reduce((a, t) => a + t.longGc.length, 0),
    gcByKind: byKind(turns),
    cpuUsPerChunk: round((turns.reduce((a, t) => a + t.cpuMs, 0) * 1000) / chunks, 1),
    ...(turns.every((t) => t.mainCpuMs !== undefined)
      ? { mainCpuUsPerChunk: round((turns.reduce((a, t) => a + (t.mainCpuMs ?? 0), 0) * 1000) / chunks, 1) }
      : {}),
    rssMb: max((t) => t.rssMb),
    ...(() => {
      const peak = turns.reduce((a, t) => (t.rssMb > a.rssMb ? t : a));
      return { ...(peak.spacesMb ? { spacesMb: peak.spacesMb } : {}), ...(peak.externalMb !== undefined ? { externalMb: peak.externalMb } : {}) };
    })(),
  };
}

export interface RelayLevel extends PathComparison {
  /** The loop probe in each relay process during its measured turns. */
  loop?: Partial<Record<Exclude<PathName, 'direct'>, LoopSummary>>;
  /** The same without each stream's first two chunks (request set-up and the first decode step). */
  steady?: PathComparison;
  /** Each stream's first chunk only (it leaves the engine as the request arrives, while 63 others are set up). */
  firstChunk?: PathComparison;
  /** Each relay path's chunks split by whether one of its process's GC pauses overlapped them (gc-attribution.ts). */
  gcHits?: Partial<Record<Exclude<PathName, 'direct'>, GcHits>>;
  /** A/B diagnostic: a second agent from another build (BENCH_AGENT_B). */
  agentB?: { agent: Summary; addedP50: number; addedP99: number };
  /** Diagnostic path: the agent with its ledger unavailable (64-stream levels). */
  noLedger?: { agent: Summary; addedP50: number; addedP99: number };
  streams: number;
  /** batched: every stream gets its chunk in the same engine step; staggered: each at its own phase. */
  phase: StepPhase;
  chunksPerStream: number;
  /** First-token time of these concurrent streams (all started together). */
  ttft: PathComparison;
}

export function compare(samples: Record<PathName, number[]>): PathComparison {
  const direct = summarize(samples.direct);
  const agent = summarize(samples.agent);
  const forwarder = summarize(samples.forwarder);
  return {
    direct,
    agent,
    forwarder,
    addedP50: round(agent.p50 - direct.p50, 3),
    addedP99: round(agent.p99 - direct.p99, 3),
    ratioP50: ratio(agent.p50, direct.p50),
    ratioP99: ratio(agent.p99, direct.p99),
    forwarderAddedP50: round(forwarder.p50 - direct.p50, 3),
    forwarderAddedP99: round(forwarder.p99 - direct.p99, 3),
  };
}

const empty = (): Record<PathName, number[]> => ({ direct: [], agent: [], forwarder: [], agentNoLedger: [], agentB: [] });

/**
 * Not counted: each relay process runs the workload before it is measured, long enough for V8 to have
 * optimised its hot code. Measured right after one short stream each (as before), the agent's bigger code
 * was still being compiled on V8's background threads during the turns, on the same 2 cores: in 64
 * one-token requests the agent's compiler threads used 1.2 ms of CPU per request against the forwarder's
 * 0.4 ms (perf), and the first chunks paid for it. A provider runs for hours; the
 * figures are of the steady state. One burst of streams of 62 chunks per path (the measured step) and
 * ten bursts of one-token requests (request set-up and end are code paths of their own).
 */
async function warmUp(rig: Rig, paths: PathName[], streams: number): Promise<void> {
  for (const p of paths) {
    await concurrentStreams(rig, p, streams, 62);
    for (let i = 0; i < 10; i++) await concurrentStreams(rig, p, streams, 1);
  }
}

/** Chunk latency at `streams` concurrent streams, decoding one chunk per stream every settings.stepMs. */
export async function relayLevel(rig: Rig, s: BenchSettings, streams: number, phase: StepPhase = 'batched', extra: PathName[] = []): Promise<RelayLevel> {
  const chunks = s.relayChunks[streams] ?? 100;
  const reps = 2;
  const paths = [...PATHS, ...extra];
  await rig.setStep(s.stepMs, phase);
  await warmUp(rig, paths, streams);
  const lat = empty();
  const first = empty();
  const steady = empty();
  const firstChunk = empty();
  const loops: Partial<Record<Exclude<PathName, 'direct'>, LoopFigures[]>> = {};
  const splits: Partial<Record<Exclude<PathName, 'direct'>, Split>> = {};
  for (let r = 0; r < reps; r++) {
    for (const p of paths) {
      const proc = p === 'direct' ? undefined : rig.processOf(p);
      await proc?.probe(); // starts the probe's window
      const traces: StreamTrace[] = await concurrentStreams(rig, p, streams, Math.ceil(chunks / reps));
      if (proc && p !== 'direct') {
        const f = (await proc.probe()) as LoopFigures;
        f.chunks = traces.reduce((a, t) => a + t.chunks, 0);
        (loops[p] ??= []).push(f);
        if (f.pauses) splitByPauses(traces, f.pauses, (splits[p] ??= emptySplit()));
      }
      for (const t of traces) {
        lat[p].push(...t.latencies);
        steady[p].push(...t.latencies.slice(2));
        if (t.latencies.length > 0) firstChunk[p].push(t.latencies[0] as number);
        first[p].push(ttft(t));
      }
    }
  }
  await rig.setStep(s.stepMs);
  const main = compare(lat);
  const level: RelayLevel = {
    streams,
    phase,
    chunksPerStream: chunks,
    ...main,
    ttft: compare(first),
    steady: compare(steady),
    firstChunk: compare(firstChunk),
  };
  if (lat.agentNoLedger.length > 0) {
    const agent = summarize(lat.agentNoLedger);
    level.noLedger = { agent, addedP50: round(agent.p50 - main.direct.p50, 3), addedP99: round(agent.p99 - main.direct.p99, 3) };
  }
  if (lat.agentB.length > 0) {
    const agent = summarize(lat.agentB);
    level.agentB = { agent, addedP50: round(agent.p50 - main.direct.p50, 3), addedP99: round(agent.p99 - main.direct.p99, 3) };
  }
  level.gcHits = {};
  for (const [p, split] of Object.entries(splits)) level.gcHits[p as Exclude<PathName, 'direct'>] = summarizeSplit(split);
  level.loop = {};
  for (const [p, turns] of Object.entries(loops)) {
    const sum = summarizeLoop(turns);
    if (sum) level.loop[p as Exclude<PathName, 'direct'>] = sum;
  }
  return level;
}

/** Time to first token of one stream at a time (engine prefill is instant), `n` requests per path. */
export async function ttftSequential(rig: Rig, n: number): Promise<PathComparison> {
  await rig.setStep(1);
  const samples = empty();
  for (let i = 0; i < 10; i++) for (const p of PATHS) await streamVia(rig, p, 1); // warm-up
  for (let i = 0; i < n; i++) {
    // Rotate the order so no path always runs right after another.
    for (let k = 0; k < PATHS.length; k++) {
      const p = PATHS[(i + k) % PATHS.length] as PathName;
      const t = await streamVia(rig, p, 1);
      if (t.error) throw new Error(`${p}: ${t.error}`);
      samples[p].push(ttft(t));
    }
  }
  return compare(samples);
}
