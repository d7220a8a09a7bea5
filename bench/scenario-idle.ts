// Idle cost: the connected agent with no traffic (GPU/host sampling at 1 Hz, heartbeats and health
// checks at their defaults) after it served a few streams, over a window of settings.idleSeconds: CPU % of one core from
// /proc/<pid>/stat (utime+stime, plus children it spawned) and RSS (VmRSS), sampled every second.
// Measured at the same time, for comparison: the minimal forwarder (connected, idle), a bare node
// process, node with the tsx loader, and (when esbuild is there) the agent prebuilt without tsx.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildAgentBundle } from './agent-bundle';
import { writeAgentHome } from './agent-home';
import { startChild, type Child } from './child';
import { concurrentStreams } from './paths';
import { rssMb, treeCpuSeconds, treeRssMb } from './proc-stats';
import type { Rig } from './rig';
import { ratio, round } from './stats';

/** The bare-node floor: the same few lines as bench/idle-process.ts, run with `node -e`. */
const BARE_IDLE = "process.stdout.write('idle process ready\\n'); setInterval(() => {}, 1 << 30); process.once('SIGINT', () => process.exit(0));";

export interface IdleFigure {
  cpuPercent: number;
  rssMeanMb: number;
  rssMaxMb: number;
  /** RSS at the end of the window. */
  rssLastMb: number;
  /** RSS of the process and every process it started. */
  treeRssMaxMb: number;
}

export interface IdleCost {
  seconds: number;
  agent: IdleFigure;
  forwarder: IdleFigure;
  bareNode: IdleFigure;
  nodeWithTsx: IdleFigure;
  bundledAgent?: IdleFigure;
  bundledAgentSkipped?: string;
  /** agent / forwarder */
  cpuRatio: number;
  rssRatio: number;
}

const BUNDLED_NAME = 'bench-agent-bundled';

async function startBundledAgent(rig: Rig): Promise<{ child: Child; home: string } | string> {
  const bundle = await buildAgentBundle();
  if ('why' in bundle) return bundle.why;
  const name = BUNDLED_NAME;
  const home = writeAgentHome(rig.hub.wsUrl, rig.hub.url, rig.engineUrl, name);
  const child = await startChild({ name: 'bundled agent', args: [bundle.file, path.join(home, 'config.toml'), home], ready: /agent running/ });
  const deadline = Date.now() + 20_000;
  while (!rig.hub.providers().some((p) => p.nodeName === name && p.connected)) {
    if (Date.now() > deadline) {
      await child.stop();
      return 'the bundled agent did not register with the dev hub within 20 s';
    }
    await sleep(20);
  }
  return { child, home };
}

export async function idleCost(rig: Rig, seconds: number): Promise<IdleCost> {
  const bare = await startChild({ name: 'bare node', args: ['-e', BARE_IDLE], ready: /idle process ready/ });
  const tsx = await startChild({ name: 'node + tsx', args: ['--import', 'tsx', 'bench/idle-process.ts'], ready: /idle process ready/ });
  const bundled = await startBundledAgent(rig).catch((e: Error) => e.message);
  const procs: Record<string, number> = { agent: rig.agent.pid, forwarder: rig.forwarder.pid, bareNode: bare.pid, nodeWithTsx: tsx.pid };
  if (typeof bundled !== 'string') procs.bundledAgent = bundled.child.pid;
  try {
    // Each relay serves a few streams first, so it idles as an agent that has worked (connections
    // open, code compiled), then start-up work (first samples, GPU detection) settles.
    await rig.setStep(5);
    await Promise.all([
      concurrentStreams(rig, 'agent', 4, 20),
      concurrentStreams(rig, 'forwarder', 4, 20),
      typeof bundled === 'string' ? undefined : Promise.all(Array.from({ length: 4 }, () => rig.driver.stream(BUNDLED_NAME, 20))),
    ]);
    await sleep(3000);
    const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, pid]) => [k, treeCpuSeconds(pid)]));
    const rss: Record<string, number[]> = Object.fromEntries(Object.keys(procs).map((k) => [k, []]));
    const tree: Record<string, number[]> = Object.fromEntries(Object.keys(procs).map((k) => [k, []]));
    const t0 = performance.now();
    for (let i = 0; i < seconds; i++) {
      await sleep(1000);
      for (const [k, pid] of Object.entries(procs)) {
        rss[k]?.push(rssMb(pid));
        tree[k]?.push(treeRssMb(pid));
      }
    }
    const elapsed = (performance.now() - t0) / 1000;
    const fig = (k: string): IdleFigure => {
      const r = rss[k] ?? [];
      return {
        cpuPercent: round(((treeCpuSeconds(procs[k] as number) - (cpu0[k] as number)) / elapsed) * 100, 3),
        rssMeanMb: round(r.reduce((a, b) => a + b, 0) / r.length, 1),
        rssMaxMb: round(Math.max(...r), 1),
        rssLastMb: round(r[r.length - 1] ?? Number.NaN, 1),
        treeRssMaxMb: round(Math.max(...(tree[k] ?? [])), 1),
      };
    };
    const agent = fig('agent');
    const forwarder = fig('forwarder');
    return {
      seconds,
      agent,
      forwarder,
      bareNode: fig('bareNode'),
      nodeWithTsx: fig('nodeWithTsx'),
      ...(typeof bundled === 'string' ? { bundledAgentSkipped: bundled } : { bundledAgent: fig('bundledAgent') }),
      cpuRatio: ratio(agent.cpuPercent, forwarder.cpuPercent),
      rssRatio: ratio(agent.rssMaxMb, forwarder.rssMaxMb),
    };
  } finally {
    await Promise.all([bare.stop(), tsx.stop(), typeof bundled === 'string' ? undefined : bundled.child.stop()]);
    if (typeof bundled !== 'string') fs.rmSync(bundled.home, { recursive: true, force: true });
  }
}
