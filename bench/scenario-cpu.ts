// BENCH_ONLY=cpu: where the CPU of relaying goes, per path and per machine part, in paired turns. The latency
// figures at 64 streams are set by how busy the 2 cores are, and a few percent of CPU are lost in their noise;
// CPU time is not. For each relay process (the agent, the minimal forwarder, and with BENCH_AGENT_B a second
// build of the agent) it takes turns of 64 concurrent streams and reads, from /proc, the user and system
// CPU of the relay process, the bench engine's and this process's (the dev hub and the harness reading
// the relayed messages) over the turn:
//   - per chunk: 64 streams × 62 tokens, the engine stepping all streams together every 20 ms (batched);
//   - per request: 64 streams × 1 token (set-up and end of a request, with 4 messages each).
import { cpuSplit, cpuSeconds } from './proc-stats';
import { concurrentStreams, type PathName } from './paths';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { median, round } from './stats';

type RelayPath = Exclude<PathName, 'direct'>;

export interface CpuShare {
  /** µs of CPU per relayed chunk (per request for the 1-token turns). */
  relayUser: number;
  relaySystem: number;
  engine: number;
  /** The bench process: dev hub and harness. */
  hub: number;
}

interface Sums {
  relayUser: number;
  relaySystem: number;
  engine: number;
  hub: number;
  units: number;
}

async function turn(rig: Rig, path: RelayPath, streams: number, tokens: number, bursts: number): Promise<Sums> {
  const pid = rig.processOf(path)?.pid;
  if (!pid) throw new Error(`no ${path} process`);
  const r0 = cpuSplit(pid);
  const e0 = cpuSeconds(rig.engine.pid);
  const h0 = process.cpuUsage();
  let chunks = 0;
  for (let i = 0; i < bursts; i++) for (const t of await concurrentStreams(rig, path, streams, tokens)) chunks += t.chunks;
  const r1 = cpuSplit(pid);
  const h = process.cpuUsage(h0);
  return {
    relayUser: (r1.user - r0.user) * 1e6,
    relaySystem: (r1.system - r0.system) * 1e6,
    engine: (cpuSeconds(rig.engine.pid) - e0) * 1e6,
    hub: h.user + h.system,
    units: tokens === 1 ? streams * bursts : chunks,
  };
}

function share(turns: Sums[]): CpuShare {
  const per = (k: keyof Omit<Sums, 'units'>): number => round(median(turns.map((t) => t[k] / t.units)), 1);
  return { relayUser: per('relayUser'), relaySystem: per('relaySystem'), engine: per('engine'), hub: per('hub') };
}

export interface CpuFigures {
  perChunk: Partial<Record<RelayPath, CpuShare>>;
  perRequest: Partial<Record<RelayPath, CpuShare>>;
}

/** Paired turns: every round gives each path one turn of each kind; medians over the rounds. */
export async function cpuShares(rig: Rig, s: BenchSettings, say: (line: string) => void): Promise<CpuFigures> {
  const paths: RelayPath[] = ['agent', 'forwarder', ...(s.agentB ? (['agentB'] as const) : [])];
  const stopB = s.agentB ? await rig.startAgentB(s.agentB) : undefined;
  const chunkTurns: Partial<Record<RelayPath, Sums[]>> = {};
  const requestTurns: Partial<Record<RelayPath, Sums[]>> = {};
  try {
    await rig.setStep(s.stepMs, 'batched');
    for (const p of paths) for (let i = 0; i < 3; i++) await concurrentStreams(rig, p, 64, 62); // warm-up
    const rounds = Math.max(4, s.latencyRounds * 2);
    for (let r = 0; r < rounds; r++) {
      for (const p of paths) {
        (chunkTurns[p] ??= []).push(await turn(rig, p, 64, 62, 2));
        (requestTurns[p] ??= []).push(await turn(rig, p, 64, 1, 4));
      }
    }
  } finally {
    await stopB?.();
  }
  const out: CpuFigures = { perChunk: {}, perRequest: {} };
  for (const p of paths) {
    out.perChunk[p] = share(chunkTurns[p] ?? []);
    out.perRequest[p] = share(requestTurns[p] ?? []);
  }
  const line = (c: CpuShare): string => `relay ${c.relayUser} user + ${c.relaySystem} system, engine ${c.engine}, dev hub and harness ${c.hub}`;
  for (const p of paths) say(`CPU per chunk (64 × 62 tokens, batched), ${p}: ${line(out.perChunk[p] as CpuShare)} µs`);
  for (const p of paths) say(`CPU per request (64 × 1 token), ${p}: ${line(out.perRequest[p] as CpuShare)} µs`);
  return out;
}
