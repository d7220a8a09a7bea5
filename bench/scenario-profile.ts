// CPU profiles, taken when a target is missed (or BENCH_PROFILE=1). The relay process is restarted under
// `node --cpu-prof`, runs the workload, and is stopped so V8 writes the profile. Under load both the agent
// and the minimal forwarder are profiled on the same workload, so their cost per relayed chunk can be
// set side by side, area by area.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { concurrentStreams } from './paths';
import { mainThreadProfile, summarizeProfile, type ProfileSummary } from './profile';
import type { Rig } from './rig';
import type { BenchSettings } from './settings';
import { round } from './stats';

export type ProfileKind = 'load' | 'idle';
export type Profiled = 'agent' | 'forwarder';

export interface RelayProfile extends ProfileSummary {
  who: Profiled;
  kind: ProfileKind;
  workload: string;
  /** Chunks relayed during the profiled workload (0 when idle). */
  chunks: number;
  /** Busy µs per relayed chunk (load only). */
  busyUsPerChunk?: number;
}

export async function profileRelay(rig: Rig, s: BenchSettings, who: Profiled, kind: ProfileKind): Promise<RelayProfile> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-bench-prof-'));
  const child = (): Rig['agent'] => (who === 'agent' ? rig.agent : rig.forwarder);
  const restart = (d?: string): Promise<void> => (who === 'agent' ? rig.restartAgent(d) : rig.restartForwarder(d));
  let workload = '';
  let chunks = 0;
  await child().stop();
  const spawnedAt = performance.now();
  await restart(dir);
  // The profile starts with the process; its start-up (loading and compiling) is left out.
  let skipMs = 0;
  try {
    if (kind === 'idle') await sleep(3000);
    skipMs = performance.now() - spawnedAt;
    if (kind === 'load') {
      const slow = s.relayChunks[64] ?? 120;
      await rig.setStep(s.stepMs);
      for (const t of await concurrentStreams(rig, who, 64, slow)) chunks += t.chunks;
      await rig.setStep(0);
      for (const t of await concurrentStreams(rig, who, s.throughputStreams, s.throughputChunks)) chunks += t.chunks;
      await rig.setStep(s.stepMs);
      workload = `64 streams x ${slow} chunks at one step per ${s.stepMs} ms, then ${s.throughputStreams} x ${s.throughputChunks} at full speed`;
    } else {
      const seconds = Math.min(30, s.idleSeconds);
      await sleep(seconds * 1000);
      workload = `${seconds} s connected and idle`;
    }
  } finally {
    const stopped = await child().stop(20_000);
    if (stopped.killed) throw new Error(`the profiled ${who} did not exit within 20 s of SIGINT, so V8 wrote no profile`);
  }
  const file = mainThreadProfile(dir);
  if (!file) throw new Error(`the profiled ${who} wrote no .cpuprofile in ${dir}`);
  const kept = path.join(os.tmpdir(), `swan-${who}-${kind}.cpuprofile`);
  fs.copyFileSync(file, kept);
  fs.rmSync(dir, { recursive: true, force: true });
  await restart();
  const summary = summarizeProfile(kept, skipMs);
  return { who, kind, workload, chunks, ...summary, ...(chunks ? { busyUsPerChunk: round((summary.busyMs * 1000) / chunks, 1) } : {}) };
}
