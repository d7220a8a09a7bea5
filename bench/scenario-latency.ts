// Relay overhead and time to first token, each path measured in the same run: the engine's stream read
// directly by the harness (baseline), relayed by the agent, and relayed by the minimal forwarder.
// Paths take turns (baseline, agent, forwarder, then again) so slow drifts of the machine hit all three.
import type { StepPhase } from './bench-engine';
import { concurrentStreams, PATHS, streamVia, type PathName } from './paths';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { round, ratio, summarize, type Summary } from './stats';
import { ttft, type StreamTrace } from './trace';

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

export interface RelayLevel extends PathComparison {
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

const empty = (): Record<PathName, number[]> => ({ direct: [], agent: [], forwarder: [], agentNoLedger: [] });

/** Chunk latency at `streams` concurrent streams, decoding one chunk per stream every settings.stepMs. */
export async function relayLevel(rig: Rig, s: BenchSettings, streams: number, phase: StepPhase = 'batched', extra: PathName[] = []): Promise<RelayLevel> {
  const chunks = s.relayChunks[streams] ?? 100;
  const reps = 2;
  const paths = [...PATHS, ...extra];
  await rig.setStep(s.stepMs, phase);
  for (const p of paths) await concurrentStreams(rig, p, streams, 10); // warm-up, not counted
  const lat = empty();
  const first = empty();
  for (let r = 0; r < reps; r++) {
    for (const p of paths) {
      const traces: StreamTrace[] = await concurrentStreams(rig, p, streams, Math.ceil(chunks / reps));
      for (const t of traces) {
        lat[p].push(...t.latencies);
        first[p].push(ttft(t));
      }
    }
  }
  await rig.setStep(s.stepMs);
  const main = compare(lat);
  const level: RelayLevel = { streams, phase, chunksPerStream: chunks, ...main, ttft: compare(first) };
  if (lat.agentNoLedger.length > 0) {
    const agent = summarize(lat.agentNoLedger);
    level.noLedger = { agent, addedP50: round(agent.p50 - main.direct.p50, 3), addedP99: round(agent.p99 - main.direct.p99, 3) };
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
