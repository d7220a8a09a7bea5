// BENCH_ONLY=latency: the 64-stream latency levels alone (batched, then staggered), with the loop probe's
// figures for each relay process and, with BENCH_AGENT_B, a second build of the agent taking its turns
// beside the first. Prints; writes nothing. The quick loop for work on the relay path.
import type { StepPhase } from './bench-engine';
import type { PathName } from './paths';
import type { Rig } from './rig';
import { profileRelay } from './scenario-profile';
import { relayLevel, type LoopSummary, type RelayLevel } from './scenario-latency';
import type { BenchSettings } from './settings';
import { round } from './stats';

export function loopLine(name: string, l: LoopSummary | undefined): string {
  if (!l) return `${name}: no loop figures`;
  return (
    `${name}: loop busy ${Math.round(l.utilization * 100)}%, delay p50 ${l.delayP50} / p99 ${l.delayP99} / p99.9 ${l.delayP999} / max ${l.delayMax} ms; ` +
    `CPU ${l.cpuUsPerChunk} µs/chunk${l.mainCpuUsPerChunk !== undefined ? ` (main thread ${l.mainCpuUsPerChunk})` : ''}; GC ${Object.entries(l.gcByKind)
      .map(([k, g]) => `${k} ${g.count}× ${g.totalMs} ms (max ${g.maxMs})`)
      .join(', ')}; RSS ${l.rssMb} MB` +
    (l.spacesMb
      ? ` (heap spaces ${Object.entries(l.spacesMb)
          .filter(([, mb]) => mb >= 0.5)
          .map(([k, mb]) => `${k} ${mb}`)
          .join(', ')}; external ${l.externalMb} MB)`
      : '')
  );
}

export function levelLines(l: RelayLevel): string[] {
  const lines = [
    `relay ${l.streams} streams ${l.phase}, ${l.agent.n} chunks: added p50 agent +${l.addedP50} / forwarder +${l.forwarderAddedP50} ms ` +
      `(agent - forwarder ${round(l.addedP50 - l.forwarderAddedP50, 3)}); added p99 agent +${l.addedP99} / forwarder +${l.forwarderAddedP99} ms ` +
      `(agent - forwarder ${round(l.addedP99 - l.forwarderAddedP99, 3)})`,
  ];
  if (l.steady && l.firstChunk) {
    lines.push(
      `  without each stream's first 2 chunks: added p50 agent +${l.steady.addedP50} / forwarder +${l.steady.forwarderAddedP50}, p99 +${l.steady.addedP99} / +${l.steady.forwarderAddedP99} ms; ` +
        `first chunks only: p50 +${l.firstChunk.addedP50} / +${l.firstChunk.forwarderAddedP50}, p99 +${l.firstChunk.addedP99} / +${l.firstChunk.forwarderAddedP99} ms`,
    );
  }
  if (l.agentB) lines.push(`  agent B (other build): added p50 +${l.agentB.addedP50}, p99 +${l.agentB.addedP99} ms`);
  for (const p of ['agent', 'agentB', 'forwarder'] as const) if (l.loop?.[p]) lines.push(`  ${loopLine(p, l.loop[p])}`);
  for (const p of ['agent', 'agentB', 'forwarder'] as const) {
    const g = l.gcHits?.[p];
    if (!g) continue;
    lines.push(
      `  ${p} GC overlap: ${g.pauses} pauses ${g.pauseMs} ms; ${round(g.hitShare * 100, 1)}% of ${g.chunks} chunks waited through one, ${round(g.tailHitShare * 100, 1)}% of the slowest 1 %; ` +
        `p50 / p99 all ${g.all.p50} / ${g.all.p99} ms, clear of GC ${g.clear.p50} / ${g.clear.p99} ms`,
    );
  }
  const a = l.gcHits?.agent;
  const f = l.gcHits?.forwarder;
  if (a && f)
    lines.push(`  agent - forwarder, chunks clear of their GC: p50 ${round(a.clear.p50 - f.clear.p50, 3)}, p99 ${round(a.clear.p99 - f.clear.p99, 3)} ms`);
  return lines;
}

export async function latencyOnly(rig: Rig, s: BenchSettings, say: (line: string) => void): Promise<RelayLevel[]> {
  const extra: PathName[] = s.agentB ? ['agentB'] : [];
  const stopB = s.agentB ? await rig.startAgentB(s.agentB) : undefined;
  const levels: RelayLevel[] = [];
  try {
    for (let r = 0; r < s.latencyRounds; r++) {
      for (const phase of ['batched', 'staggered'] as StepPhase[]) {
        const l = await relayLevel(rig, s, 64, phase, extra);
        levels.push(l);
        for (const line of levelLines(l)) say(line);
      }
    }
  } finally {
    await stopB?.();
  }
  // BENCH_PROFILE=1: the agent's and the forwarder's CPU profiles on the same load, side by side.
  if (s.forceProfile) {
    for (const who of ['agent', 'forwarder'] as const) {
      const p = await profileRelay(rig, s, who, 'load');
      say(`profile ${who}: ${p.busyMs} ms busy, ${p.busyUsPerChunk} µs per chunk (${p.file} kept in the temp folder)`);
      for (const a of p.areas) say(`  area ${a.frame}: ${a.selfMs} ms (${a.percent}%)`);
      for (const f of p.top) say(`  ${f.frame}: ${f.selfMs} ms (${f.percent}%)`);
    }
  }
  return levels;
}
