// The report of one run: bench/results.json (everything), bench/results.md (the tables) and the table
// between <!-- bench:start --> and <!-- bench:end --> in README.md.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './child';
import type { ClockOffset } from './clock';
import type { HelperBench } from './helpers';
import type { MachineLoad } from './load';
import { machineLines, type Machine } from './machine';
import type { IdleCost, IdleFigure } from './scenario-idle';
import type { PathComparison, RelayLevel } from './scenario-latency';
import type { MemoryUnderLoad } from './scenario-memory';
import type { RelayProfile } from './scenario-profile';
import type { Throughput } from './scenario-throughput';
import type { BenchSettings } from './settings';
import { round } from './stats';
import { rssUnderLoad, type Target } from './targets';

export interface BenchResults {
  machine: Machine;
  load: MachineLoad;
  settings: BenchSettings;
  seconds: number;
  clock: ClockOffset;
  ttft: PathComparison;
  relay: RelayLevel[];
  throughput: Throughput;
  memory: MemoryUnderLoad;
  idle: IdleCost;
  targets: Target[];
  profiles: RelayProfile[];
  profileSkipped?: string;
  helpers: HelperBench[];
}

const ms = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 2 : 1)} ms` : 'n/a');
const plus = (v: number): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(2)} ms` : 'n/a');
const x = (v: number): string => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'n/a');
const mb = (v: number): string => `${v.toFixed(1)} MB`;
const met = (t: Target | undefined): string => (t ? (t.met ? 'met' : '**missed**') : '');

/** A table's header row and its separator. */
function head(cells: string[]): string[] {
  return [row(cells), row(cells.map(() => '---'))];
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** The main table: each figure with its baseline, the difference, the ratio and the target. */
export function mainTable(r: BenchResults): string[] {
  const target = (id: string): Target | undefined => r.targets.find((t) => t.id === id);
  const lines = [...head(['Figure', 'Baseline', 'Agent', 'Agent − baseline', 'Ratio', 'Minimal forwarder', 'Target'])];
  for (const l of r.relay) {
    const sfx = l.phase === 'batched' ? '' : `-${l.phase}`;
    const t50 = l.streams === 64 ? target(`relay-p50-64${sfx}`) : undefined;
    const t99 = l.streams === 64 ? target(`relay-p99-64${sfx}`) : undefined;
    const name = `${l.streams} stream${l.streams > 1 ? 's' : ''}${l.streams > 1 ? `, ${l.phase}` : ''}`;
    lines.push(
      row([
        `Relay overhead p50, ${name}`,
        ms(l.direct.p50),
        ms(l.agent.p50),
        plus(l.addedP50),
        x(l.ratioP50),
        `${ms(l.forwarder.p50)} (${plus(l.forwarderAddedP50)})`,
        t50 ? `+0.5 ms: ${met(t50)}; ≤ forwarder: ${met(target(`fwd-p50-64${sfx}`))}` : '',
      ]),
      row([
        `Relay overhead p99, ${name}`,
        ms(l.direct.p99),
        ms(l.agent.p99),
        plus(l.addedP99),
        x(l.ratioP99),
        `${ms(l.forwarder.p99)} (${plus(l.forwarderAddedP99)})`,
        t99 ? `+5 ms: ${met(t99)}; ≤ forwarder + 0.5 ms: ${met(target(`fwd-p99-64${sfx}`))}` : '',
      ]),
    );
  }
  const tt = r.ttft;
  lines.push(
    row([
      'Time to first token p50',
      ms(tt.direct.p50),
      ms(tt.agent.p50),
      plus(tt.addedP50),
      x(tt.ratioP50),
      `${ms(tt.forwarder.p50)} (${plus(tt.forwarderAddedP50)})`,
      `+2 ms: ${met(target('ttft-p50'))}`,
    ]),
    row([
      'Time to first token p99',
      ms(tt.direct.p99),
      ms(tt.agent.p99),
      plus(tt.addedP99),
      x(tt.ratioP99),
      `${ms(tt.forwarder.p99)} (${plus(tt.forwarderAddedP99)})`,
      '',
    ]),
  );
  const th = r.throughput;
  const same = '= baseline';
  lines.push(
    row([
      `Throughput, ${th.streams} streams at full speed`,
      `${th.forwarder} chunks/s (forwarder)`,
      `${th.agent} chunks/s`,
      '',
      x(th.ratioToForwarder),
      `${same}; engine read directly: ${th.direct} chunks/s`,
      `≥ 0.70×: ${met(target('throughput'))}`,
    ]),
    row([
      'CPU per relayed chunk, at full speed',
      `${th.cpuUsPerChunk.forwarder} µs (forwarder)`,
      `${th.cpuUsPerChunk.agent} µs`,
      `+${round(th.cpuUsPerChunk.agent - th.cpuUsPerChunk.forwarder, 1)} µs`,
      x(th.cpuRatio),
      same,
      '',
    ]),
  );
  const load = rssUnderLoad(r.relay);
  if (load)
    lines.push(
      row([
        'RSS at 64 streams × 50 tok/s (peak)',
        `${mb(load.forwarder)} (forwarder)`,
        mb(load.agent),
        '',
        x(load.ratio),
        same,
        `≤ 1.5×: ${met(target('fwd-rss-64'))}`,
      ]),
    );
  const i = r.idle;
  lines.push(
    row([
      `Idle CPU, ${i.seconds} s (% of one core)`,
      `${i.forwarder.cpuPercent}% (forwarder)`,
      `${i.agent.cpuPercent}%`,
      '',
      x(i.cpuRatio),
      same,
      `< 1%: ${met(target('idle-cpu'))}`,
    ]),
    row(['Idle RSS (max)', `${mb(i.forwarder.rssMaxMb)} (forwarder)`, mb(i.agent.rssMaxMb), '', x(i.rssRatio), same, `< 100 MB: ${met(target('idle-rss'))}`]),
  );
  const m = r.memory;
  const peakA = Math.max(...m.agent.peak, ...(m.agent.again?.peak ?? []));
  const peakF = Math.max(...m.forwarder.peak);
  lines.push(
    row([`RSS at ${m.streams} streams (peak of all rounds)`, `${mb(peakF)} (forwarder)`, mb(peakA), '', x(m.peakRatio), same, '']),
    row([
      `RSS 1 s after each of ${m.agent.after.length} rounds`,
      `${m.forwarder.after.join(', ')} MB (forwarder)`,
      `${m.agent.after.join(', ')} MB; ${m.agent.settled ?? '?'} MB 37 s later`,
      '',
      '',
      `growth ${m.forwarder.growth >= 0 ? '+' : ''}${m.forwarder.growth} MB`,
      '',
    ]),
    row([
      `RSS after ${m.agent.again?.after.length ?? 0} more rounds (after the 30 s retention window)`,
      '',
      `${m.agent.again?.after.join(', ') ?? ''} MB`,
      `growth ${m.agent.growth >= 0 ? '+' : ''}${m.agent.growth} MB`,
      '',
      '',
      `no growth: ${met(target('memory-growth'))}`,
    ]),
  );
  return lines;
}

function footprintTable(i: IdleCost): string[] {
  const line = (name: string, f: IdleFigure): string => row([name, `${f.cpuPercent}%`, mb(f.rssMaxMb), mb(f.treeRssMaxMb)]);
  return [
    ...head(['Process (idle, same window)', 'CPU', 'RSS', 'RSS with children']),
    line('bare node', i.bareNode),
    line('node + tsx loader', i.nodeWithTsx),
    line('minimal forwarder (its bundle, no tsx)', i.forwarder),
    line('agent as users run it (bin/swan-provider.js: out/cli/main.mjs)', i.agent),
    i.bundledAgent
      ? line("agent's run() alone, prebuilt (bench/agent-bundle.ts)", i.bundledAgent)
      : row(['agent prebuilt (no tsx)', `skipped: ${i.bundledAgentSkipped ?? ''}`, '', '']),
  ];
}

function helperLines(h: HelperBench[]): string[] {
  const out: string[] = [];
  for (const b of h) {
    if (b.status !== 'ok') {
      out.push(`- **${b.name}** (${b.file}): ${b.status} — ${b.reason ?? ''}`);
      continue;
    }
    const figs = Object.entries(b.figures ?? {})
      .map(([k, v]) => `${k} ${String(v)}`)
      .join(', ');
    out.push(`- **${b.name}** (${b.file}, ${b.seconds} s): ${figs}`);
  }
  return out;
}

/** The targets against the minimal forwarder, side by side in the same run, and what each loop went through. */
function forwarderLines(r: BenchResults): string[] {
  const ts = r.targets.filter((t) => t.id.startsWith('fwd-'));
  const out = [...head(['Figure', 'Value', 'Target', ''])];
  for (const t of ts) out.push(row([t.figure, `${t.value} ${t.unit}`, t.target, met(t)]));
  const loops = r.relay.filter((l) => l.loop && Object.keys(l.loop).length > 0);
  if (loops.length > 0) {
    out.push(
      '',
      'Inside each relay process during its measured turns (bench/loop-probe.mjs): event-loop delay of a 1 ms timer (the',
      "worst turn), loop utilisation, CPU per relayed chunk (all threads; the main thread's share in brackets on Linux),",
      'GC pauses by kind (summed), peak RSS.',
      '',
      ...head(['Level', 'Process', 'Loop busy', 'Delay p50 / p99 / p99.9 / max', 'CPU per chunk', 'GC pauses', 'RSS']),
    );
    for (const l of loops) {
      for (const [who, g] of Object.entries(l.loop ?? {})) {
        if (!g) continue;
        const gc = Object.entries(g.gcByKind)
          .map(([k, v]) => `${k} ${v.count}× ${v.totalMs} ms (max ${v.maxMs})`)
          .join(', ');
        out.push(
          row([
            `${l.streams} ${l.phase}`,
            who,
            `${Math.round(g.utilization * 100)}%`,
            `${g.delayP50} / ${g.delayP99} / ${g.delayP999} / ${g.delayMax} ms`,
            `${g.cpuUsPerChunk} µs${g.mainCpuUsPerChunk !== undefined ? ` (${g.mainCpuUsPerChunk})` : ''}`,
            gc,
            mb(g.rssMb),
          ]),
        );
      }
    }
    const st = r.relay.filter((l) => l.streams === 64 && l.steady && l.firstChunk);
    if (st.length > 0) {
      out.push('', ...head(['Level', 'Added p50 / p99 without the first 2 chunks of each stream', 'Forwarder', 'First chunk only: agent', 'Forwarder']));
      for (const l of st) {
        out.push(
          row([
            `64 ${l.phase}`,
            `${plus(l.steady!.addedP50)} / ${plus(l.steady!.addedP99)}`,
            `${plus(l.steady!.forwarderAddedP50)} / ${plus(l.steady!.forwarderAddedP99)}`,
            `${plus(l.firstChunk!.addedP50)} / ${plus(l.firstChunk!.addedP99)}`,
            `${plus(l.firstChunk!.forwarderAddedP50)} / ${plus(l.firstChunk!.forwarderAddedP99)}`,
          ]),
        );
      }
    }
    const hits = r.relay.filter((l) => l.gcHits?.agent && l.gcHits.forwarder);
    if (hits.length > 0) {
      out.push(
        '',
        'Which chunks waited through a GC pause of the process relaying them (bench/gc-attribution.ts: a pause of that',
        "process overlapped the chunk's way from the engine to the reader), and the p99 of the chunks none overlapped.",
        '',
        ...head([
          'Level',
          'Chunks a pause held: agent / forwarder',
          'Of the slowest 1 %',
          'p99 clear of GC: agent / forwarder',
          'Agent − forwarder, clear of GC: p50 / p99',
        ]),
      );
      const pct = (x: number): string => `${round(x * 100, 1)} %`;
      for (const l of hits) {
        const a = l.gcHits!.agent!;
        const f = l.gcHits!.forwarder!;
        out.push(
          row([
            `${l.streams} ${l.phase}`,
            `${pct(a.hitShare)} / ${pct(f.hitShare)}`,
            `${pct(a.tailHitShare)} / ${pct(f.tailHitShare)}`,
            `${ms(a.clear.p99)} / ${ms(f.clear.p99)}`,
            `${plus(round(a.clear.p50 - f.clear.p50, 3))} / ${plus(round(a.clear.p99 - f.clear.p99, 3))}`,
          ]),
        );
      }
    }
  }
  return out;
}

function withoutLedgerLines(r: BenchResults): string[] {
  const levels = r.relay.filter((l) => l.noLedger);
  if (levels.length === 0) return ['Not measured in this run.'];
  const lines = [
    'At 64 streams a second agent took its turn too, with its SQLite ledger unavailable (ledger.sqlite made a directory,',
    'so it keeps usage in memory, its own fallback): the difference is what the fsynced commit of each finished request',
    'on the agent’s thread costs the streams still running.',
    '',
    ...head(['Figure', 'Baseline', 'Agent', 'Agent, no ledger', 'Added: agent / no ledger']),
  ];
  for (const l of levels) {
    const n = l.noLedger!;
    lines.push(
      row([`Relay p50, ${l.streams} streams, ${l.phase}`, ms(l.direct.p50), ms(l.agent.p50), ms(n.agent.p50), `${plus(l.addedP50)} / ${plus(n.addedP50)}`]),
      row([`Relay p99, ${l.streams} streams, ${l.phase}`, ms(l.direct.p99), ms(l.agent.p99), ms(n.agent.p99), `${plus(l.addedP99)} / ${plus(n.addedP99)}`]),
    );
  }
  return lines;
}

function profileLines(r: BenchResults): string[] {
  if (r.profiles.length === 0) return [`CPU profiles: ${r.profileSkipped ?? 'none taken'}.`];
  const out: string[] = [];
  for (const p of r.profiles) {
    const perChunk = p.busyUsPerChunk ? `, ${p.busyUsPerChunk} µs per relayed chunk` : '';
    out.push(`CPU profile of the ${p.who}, ${p.kind} (${p.workload}; ${p.busyMs} ms busy of ${p.wallMs} ms${perChunk}):`, '');
    out.push(...head(['Self time', '%', 'Frame']));
    for (const f of p.top.slice(0, 12)) out.push(row([`${f.selfMs} ms`, `${f.percent}%`, `\`${f.frame}\``]));
    out.push('', `By area: ${p.areas.map((a) => `${a.frame} ${a.percent}%`).join(', ')}`, '');
  }
  const agent = r.profiles.find((p) => p.who === 'agent' && p.kind === 'load');
  const fwd = r.profiles.find((p) => p.who === 'forwarder' && p.kind === 'load');
  if (agent?.chunks && fwd?.chunks) {
    const per = (p: RelayProfile, area: string): number => round(((p.areas.find((a) => a.frame === area)?.selfMs ?? 0) * 1000) / p.chunks, 2);
    const names = [...new Set([...agent.areas, ...fwd.areas].map((a) => a.frame))];
    out.push('Busy µs per relayed chunk by area, same workload:', '', ...head(['Area', 'Agent', 'Minimal forwarder']));
    for (const n of names.sort((a, b) => per(agent, b) - per(agent, a))) out.push(row([n, String(per(agent, n)), String(per(fwd, n))]));
    out.push(row(['**total**', String(agent.busyUsPerChunk), String(fwd.busyUsPerChunk)]), '');
  }
  return out;
}

export function renderMarkdown(r: BenchResults): string {
  return [
    '# Bench results',
    '',
    `\`npm run bench\`${r.settings.quick ? ' (BENCH_QUICK=1: shorter runs, noisier figures)' : ''}, ${Math.round(r.seconds)} s. Baseline of the latency rows: the engine's stream read`,
    'directly by the bench process. Minimal forwarder: ws + eventsource-parser, no features. Method: docs/performance.md.',
    '',
    ...machineLines(r.machine).map((l) => `- ${l}`),
    `- machine load: load average ${r.load.loadAvgStart.join(' ')} at the start, ${r.load.loadAvgEnd.join(' ')} at the end; all cores ${r.load.busyPercent}% busy over the run (every process)`,
    ...(r.load.warning ? [`- **note**: ${r.load.warning}`] : []),
    `- engine clock offset ${r.clock.offsetMs.toFixed(3)} ms (± ${(r.clock.rttMs / 2).toFixed(3)} ms), subtracted from every chunk latency`,
    '',
    ...mainTable(r),
    '',
    '## Against the minimal forwarder',
    '',
    ...forwarderLines(r),
    '',
    '## Footprint, idle',
    '',
    ...footprintTable(r.idle),
    '',
    '## Diagnostic: the agent without its ledger',
    '',
    ...withoutLedgerLines(r),
    '',
    '## Other helpers’ benches',
    '',
    ...helperLines(r.helpers),
    '',
    '## Profiles',
    '',
    ...profileLines(r),
  ].join('\n');
}

/** The README section: the main table and where the rest is. */
export function renderReadmeSection(r: BenchResults): string {
  return [
    '<!-- bench:start -->',
    `Benchmarks (\`npm run bench\`, ${r.machine.cpu}, ${r.machine.cores} cores, node ${r.machine.node}, ${r.machine.date.slice(0, 10)}${r.load.warning ? ', on a machine busy with other work' : ''}; method in`,
    '[docs/performance.md](docs/performance.md), every figure in [bench/results.md](bench/results.md)):',
    '',
    ...mainTable(r),
    '<!-- bench:end -->',
  ].join('\n');
}

/** Replaces the text between the README markers; returns why not when they are missing. */
export function updateReadme(r: BenchResults): string | undefined {
  const file = path.join(ROOT, 'README.md');
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf('<!-- bench:start -->');
  const end = text.indexOf('<!-- bench:end -->');
  if (start < 0 || end < start) return 'README.md has no <!-- bench:start --> / <!-- bench:end --> markers';
  fs.writeFileSync(file, text.slice(0, start) + renderReadmeSection(r) + text.slice(end + '<!-- bench:end -->'.length));
  return undefined;
}

export function writeResults(r: BenchResults): { json: string; md: string } {
  const json = path.join(ROOT, 'bench', 'results.json');
  const md = path.join(ROOT, 'bench', 'results.md');
  fs.writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  fs.writeFileSync(md, `${renderMarkdown(r)}\n`);
  return { json, md };
}
