// CPU profiles of the agent, taken when a target is missed (or BENCH_PROFILE=1): the agent is restarted
// under `node --cpu-prof` on the same home, runs the workload, and is stopped so V8 writes the profile.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { concurrentStreams } from './paths';
import { newestProfile, summarizeProfile, type ProfileSummary } from './profile';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';

export type ProfileKind = 'load' | 'idle';

export interface AgentProfile extends ProfileSummary {
  kind: ProfileKind;
  workload: string;
}

export async function profileAgent(rig: Rig, s: BenchSettings, kind: ProfileKind): Promise<AgentProfile> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-bench-prof-'));
  let workload: string;
  await rig.agent.stop();
  const spawnedAt = performance.now();
  await rig.restartAgent(dir);
  // The profile starts with the process; its start-up (loading and compiling) is left out.
  let skipMs = 0;
  try {
    if (kind === 'idle') await sleep(3000);
    skipMs = performance.now() - spawnedAt;
    if (kind === 'load') {
      await rig.setStep(s.stepMs);
      await concurrentStreams(rig, 'agent', 64, s.relayChunks[64] ?? 150);
      await rig.setStep(0);
      await concurrentStreams(rig, 'agent', s.throughputStreams, s.throughputChunks);
      await rig.setStep(s.stepMs);
      workload = `64 streams x ${s.relayChunks[64] ?? 150} chunks at one step per ${s.stepMs} ms, then ${s.throughputStreams} x ${s.throughputChunks} at full speed`;
    } else {
      const seconds = Math.min(30, s.idleSeconds);
      await sleep(seconds * 1000);
      workload = `${seconds} s connected and idle`;
    }
  } finally {
    const stopped = await rig.agent.stop(20_000);
    if (stopped.killed) throw new Error('the profiled agent did not exit within 20 s of SIGINT, so V8 wrote no profile');
  }
  const file = newestProfile(dir);
  if (!file) throw new Error(`the profiled agent wrote no .cpuprofile in ${dir}`);
  const kept = path.join(os.tmpdir(), `swan-agent-${kind}.cpuprofile`);
  fs.copyFileSync(file, kept);
  fs.rmSync(dir, { recursive: true, force: true });
  await rig.restartAgent();
  return { kind, workload, ...summarizeProfile(kept, skipMs) };
}
