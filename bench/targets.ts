// The targets, checked against the figures of one run.
import type { IdleCost } from './scenario-idle';
import type { RelayLevel, PathComparison } from './scenario-latency';
import type { MemoryUnderLoad } from './scenario-memory';
import type { Throughput } from './scenario-throughput';

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

export function checkTargets(f: { relay: RelayLevel[]; ttft: PathComparison; throughput: Throughput; idle: IdleCost; memory: MemoryUnderLoad }): Target[] {
  const t: Target[] = [];
  for (const l of f.relay.filter((x) => x.streams === 64)) {
    const sfx = l.phase === 'batched' ? '' : `-${l.phase}`;
    t.push({ id: `relay-p50-64${sfx}`, figure: `relay overhead p50 added, 64 streams ${l.phase}`, target: '< 0.5 ms', value: l.addedP50, unit: 'ms', met: l.addedP50 < 0.5, profile: 'load' });
    t.push({ id: `relay-p99-64${sfx}`, figure: `relay overhead p99 added, 64 streams ${l.phase}`, target: '< 5 ms', value: l.addedP99, unit: 'ms', met: l.addedP99 < 5, profile: 'load' });
  }
  t.push({ id: 'ttft-p50', figure: 'time to first token p50 added', target: '< 2 ms', value: f.ttft.addedP50, unit: 'ms', met: f.ttft.addedP50 < 2, profile: 'load' });
  t.push({
    id: 'throughput',
    figure: 'throughput vs minimal forwarder',
    target: '>= 70 %',
    value: Math.round(f.throughput.ratioToForwarder * 100),
    unit: '%',
    met: f.throughput.ratioToForwarder >= 0.7,
    profile: 'load',
  });
  t.push({ id: 'idle-cpu', figure: `idle CPU (${f.idle.seconds} s)`, target: '< 1 %', value: f.idle.agent.cpuPercent, unit: '%', met: f.idle.agent.cpuPercent < 1, profile: 'idle' });
  t.push({ id: 'idle-rss', figure: 'idle RSS', target: '< 100 MB', value: f.idle.agent.rssMaxMb, unit: 'MB', met: f.idle.agent.rssMaxMb < 100, profile: 'none' });
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
