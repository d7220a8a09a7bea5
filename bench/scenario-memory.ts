// Memory under load: RSS while 64 streams run and one second after they finished, five rounds in a
// row, for the agent and for the minimal forwarder (the baseline). The agent keeps each finished
// stream's messages 30 s for resume (swept every 5 s), so its after-round readings climb by design.
// So the agent's RSS is read again once that window has passed ("settled"), and then the same five
// rounds run again: memory that was only retained is reused, memory that leaks adds up. Growth is the
// last after-round reading of the second set minus that of the first. `meanwhile` runs during the wait.
import { setTimeout as sleep } from 'node:timers/promises';
import { concurrentStreams, type PathName } from './paths';
import { rssMb } from './proc-stats';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { ratio, round } from './stats';

/** The relay's linger for finished streams (30 s) plus its sweep period (5 s) and a margin. */
export const RETENTION_WINDOW_MS = 37_000;

export interface MemoryRounds {
  /** Peak RSS (MB) while the streams ran, per round. */
  peak: number[];
  /** RSS (MB) one second after the round ended, per round. */
  after: number[];
  /** RSS (MB) once the retention window passed after the last round (agent only). */
  settled?: number;
  /** The same rounds again after the window (agent only). */
  again?: { peak: number[]; after: number[] };
  /** Agent: again.after[last] - after[last]; forwarder: after[last] - after[first]. MB */
  growth: number;
}

export interface MemoryUnderLoad {
  streams: number;
  chunksPerStream: number;
  stepMs: number;
  agent: MemoryRounds;
  forwarder: MemoryRounds;
  /** agent peak / forwarder peak (max over all rounds) */
  peakRatio: number;
}

async function rounds(rig: Rig, path: Exclude<PathName, 'direct'>, s: BenchSettings, streams: number): Promise<MemoryRounds> {
  const pid = path === 'agent' ? rig.agent.pid : rig.forwarder.pid;
  const peak: number[] = [];
  const after: number[] = [];
  for (let r = 0; r < s.memoryRounds; r++) {
    let max = rssMb(pid);
    const sampler = setInterval(() => {
      max = Math.max(max, rssMb(pid));
    }, 50);
    try {
      await concurrentStreams(rig, path, streams, s.memoryChunks);
    } finally {
      clearInterval(sampler);
    }
    peak.push(round(Math.max(max, rssMb(pid)), 1));
    await sleep(1000);
    after.push(round(rssMb(pid), 1));
  }
  return { peak, after, growth: round((after[after.length - 1] ?? 0) - (after[0] ?? 0), 1) };
}

export async function memoryUnderLoad(rig: Rig, s: BenchSettings, meanwhile?: () => Promise<unknown>, streams = 64): Promise<MemoryUnderLoad> {
  const stepMs = 10;
  await rig.setStep(stepMs);
  const agent = await rounds(rig, 'agent', s, streams);
  const agentDoneAt = performance.now();
  const forwarder = await rounds(rig, 'forwarder', s, streams);
  await rig.setStep(s.stepMs);
  await meanwhile?.();
  const left = RETENTION_WINDOW_MS - (performance.now() - agentDoneAt);
  if (left > 0) await sleep(left);
  agent.settled = round(rssMb(rig.agent.pid), 1);
  await rig.setStep(stepMs);
  const again = await rounds(rig, 'agent', s, streams);
  agent.again = { peak: again.peak, after: again.after };
  agent.growth = round((again.after[again.after.length - 1] ?? 0) - (agent.after[agent.after.length - 1] ?? 0), 1);
  await rig.setStep(s.stepMs);
  return {
    streams,
    chunksPerStream: s.memoryChunks,
    stepMs,
    agent,
    forwarder,
    peakRatio: ratio(Math.max(...agent.peak, ...again.peak), Math.max(...forwarder.peak)),
  };
}
