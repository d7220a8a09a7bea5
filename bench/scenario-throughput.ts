// Throughput: engines at full speed (each decode step follows the last as soon as the sockets take the
// bytes); chunks per second that reach the hub through the agent, through the minimal forwarder (the
// practical limit) and, for scale, read directly from the engine.
import { concurrentStreams, PATHS, type PathName } from './paths';
import { treeCpuSeconds } from './proc-stats';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { median, ratio, round } from './stats';

export interface Throughput {
  streams: number;
  chunksPerStream: number;
  /** Median over the repetitions, chunks/s. */
  direct: number;
  agent: number;
  forwarder: number;
  runs: Record<'direct' | 'agent' | 'forwarder', number[]>;
  /** CPU time (user + system) the relay process spent per relayed chunk, µs (median over the runs). */
  cpuUsPerChunk: { agent: number; forwarder: number };
  /** agent / forwarder CPU per chunk */
  cpuRatio: number;
  /** agent / forwarder */
  ratioToForwarder: number;
  ratioToDirect: number;
}

export async function throughput(rig: Rig, s: BenchSettings): Promise<Throughput> {
  await rig.setStep(0);
  for (const p of PATHS) await concurrentStreams(rig, p, s.throughputStreams, 50); // warm-up
  const runs: Record<PathName, number[]> = { direct: [], agent: [], forwarder: [], agentNoLedger: [], agentB: [] };
  const cpu: Record<PathName, number[]> = { direct: [], agent: [], forwarder: [], agentNoLedger: [], agentB: [] };
  for (let r = 0; r < s.throughputReps; r++) {
    for (const p of PATHS) {
      const pid = p === 'agent' ? rig.agent.pid : p === 'forwarder' ? rig.forwarder.pid : undefined;
      const cpu0 = pid ? treeCpuSeconds(pid) : 0;
      const traces = await concurrentStreams(rig, p, s.throughputStreams, s.throughputChunks);
      const start = Math.min(...traces.map((t) => t.sentAt));
      const end = Math.max(...traces.map((t) => t.endAt ?? Number.NaN));
      const chunks = traces.reduce((n, t) => n + t.chunks, 0);
      runs[p].push(round(chunks / ((end - start) / 1000), 0));
      if (pid) cpu[p].push(round(((treeCpuSeconds(pid) - cpu0) * 1e6) / chunks, 1));
    }
  }
  await rig.setStep(s.stepMs);
  const direct = median(runs.direct);
  const agent = median(runs.agent);
  const forwarder = median(runs.forwarder);
  return {
    streams: s.throughputStreams,
    chunksPerStream: s.throughputChunks,
    direct,
    agent,
    forwarder,
    runs: { direct: runs.direct, agent: runs.agent, forwarder: runs.forwarder },
    cpuUsPerChunk: { agent: median(cpu.agent), forwarder: median(cpu.forwarder) },
    cpuRatio: ratio(median(cpu.agent), median(cpu.forwarder)),
    ratioToForwarder: ratio(agent, forwarder),
    ratioToDirect: ratio(agent, direct),
  };
}
