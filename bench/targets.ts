// The targets, checked against the figures of one run.
import type { IdleCost } from './scenario-idle';
import type { RelayLevel, PathComparison } from './scenario-latency';
import type { MemoryUnderLoad } from './scenario-memory';
import type { Throughput } from './scenario-throughput';
import { round } from './stats';

export interface Target {
  id: string;
  figure: string;
  target: string;
  value: number;
  unit: string;
  met: boolean;
  /** What to profile when missed. */
  profile: 'load' | 'idle' | 'none';
}

/** RSS growth from one set of rounds to the same set again that counts as growth (MB): above V8's heap noise. */
export const GROWTH_LIMIT_MB = 5;

/** Peak RSS (MB) the loop probe read in the agent and the forwarder during the 64-stream levels. */
export function rssUnderLoad(relay: RelayLevel[]): { agent: number; forwarder: number; ratio: number } | undefined {
  const levels = relay.filter((l) => l.streams === 64 && l.loop?.agent && l.loop.forwarder);
  if (levels.length === 0) return undefined;
  const agent = Math.max(...levels.map((l) => l.loop!.agent!.rssMb));
  const forwarder = Math.max(...levels.map((l) => l.loop!.forwarder!.rssMb));
  return { agent, forwarder, ratio: round(agent / forwarder, 2) };
}

export function checkTargets(f: { relay: RelayLevel[]; ttft: PathComparison; throughput: Throughput; idle: IdleCost; memory: MemoryUnderLoad }): Target[] {
  const t: Target[] = [];
  // Side by side with the minimal forwarder in the same run.
  for (const l of f.relay.filter((x) => x.streams === 64)) {
    const sfx = l.phase === 'batched' ? '' : `-${l.phase}`;
    const d50 = round(l.addedP50 - l.forwarderAddedP50, 3);
    const d99 = round(l.addedP99 - l.forwarderAddedP99, 3);
    t.push({
      id: `fwd-p50-64${sfx}`,
      figure: `p50 added per chunk, 64 streams ${l.phase}: agent minus forwarder`,
      target: '<= 0 ms',
      value: d50,
      unit: 'ms',
      met: d50 <= 0,
      profile: 'load',
    });
    t.push({
      id: `fwd-p99-64${sfx}`,
      figure: `p99 added per chunk, 64 streams ${l.phase}: agent minus forwarder`,
      target: '<= +0.5 ms',
      value: d99,
      unit: 'ms',
      met: d99 <= 0.5,
      profile: 'load',
    });
  }
  const rss = rssUnderLoad(f.relay);
  if (rss)
    t.push({
      id: 'fwd-rss-64',
      figure: 'RSS at 64 streams x 50 tok/s: agent / forwarder',
      target: '<= 1.5x',
      value: rss.ratio,
      unit: 'x',
      met: rss.ratio <= 1.5,
      profile: 'none',
    });
  for (const l of f.relay.filter((x) => x.streams === 64)) {
    const sfx = l.phase === 'batched' ? '' : `-${l.phase}`;
    t.push({
      id: `relay-p50-64${sfx}`,
      figure: `relay overhead p50 added, 64 streams ${l.phase}`,
      target: '< 0.5 ms',
      value: l.addedP50,
      unit: 'ms',
      met: l.addedP50 < 0.5,
      profile: 'load',
    });
    t.push({
      id: `relay-p99-64${sfx}`,
      figure: `relay overhead p99 added, 64 streams ${l.phase}`,
      target: '< 5 ms',
      value: l.addedP99,
      unit: 'ms',
      met: l.addedP99 < 5,
      profile: 'load',
    });
  }
  t.push({
    id: 'ttft-p50',
    figure: 'time to first token p50 added',
    target: '< 2 ms',
    value: f.ttft.addedP50,
    unit: 'ms',
    met: f.ttft.addedP50 < 2,
    profile: 'load',
  });
  t.push({
    id: 'throughput',
    figure: 'throughput vs minimal forwarder',
    target: '>= 70 %',
    value: Math.round(f.throughput.ratioToForwarder * 100),
    unit: '%',
    met: f.throughput.ratioToForwarder >= 0.7,
    profile: 'load',
  });
  t.push({
    id: 'idle-cpu',
    figure: `idle CPU (${f.idle.seconds} s)`,
    target: '< 1 %',
    value: f.idle.agent.cpuPercent,
    unit: '%',
    met: f.idle.agent.cpuPercent < 1,
    profile: 'idle',
  });
  t.push({
    id: 'idle-rss',
    figure: 'idle RSS',
    target: '< 100 MB',
    value: f.idle.agent.rssMaxMb,
    unit: 'MB',
    met: f.idle.agent.rssMaxMb < 100,
    profile: 'none',
  });
  t.push({
    id: 'memory-growth',
    figure: `RSS growth, ${f.memory.agent.after.length} more rounds of ${f.memory.streams} streams after the retention window`,
    target: `no growth (< ${GROWTH_LIMIT_MB} MB)`,
    value: f.memory.agent.growth,
    unit: 'MB',
    met: f.memory.agent.growth < GROWTH_LIMIT_MB,
    profile: 'none',
  });
  return t;
}
