// `npm run bench`: relay overhead, time to first token, throughput, idle cost and memory of the agent,
// each against a baseline measured in the same run, then the other helpers' benches. Writes
// bench/results.json, bench/results.md and the README table. Settings: bench/settings.ts.
import type { StepPhase } from './bench-engine';
import os from 'node:os';
import { runHelperBenches, type HelperBench } from './helpers';
import { LoadMonitor } from './load';
import { machine, machineLines } from './machine';
import { renderMarkdown, updateReadme, writeResults, type BenchResults } from './report';
import { startRig, type Rig } from './rig';
import { idleCost } from './scenario-idle';
import { latencyOnly, levelLines } from './latency-only';
import { cpuShares } from './scenario-cpu';
import { relayLevel, ttftSequential, type RelayLevel } from './scenario-latency';
import { memoryUnderLoad } from './scenario-memory';
import { metricsCost } from './scenario-metrics';
import { weightsBench } from './scenario-weights';
import { modelsBench } from './scenario-models';
import { profileRelay, type ProfileKind, type RelayProfile } from './scenario-profile';
import { throughput } from './scenario-throughput';
import { readSettings } from './settings';
import { checkTargets } from './targets';

const t0 = performance.now();
const say = (line: string): void => {
  process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

async function main(): Promise<number> {
  const settings = readSettings();
  const load = new LoadMonitor();
  const m = machine();
  for (const l of machineLines(m)) say(l);
  say(
    `load average ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')} on ${m.cores} cores`,
  );
  say(
    `settings: idle ${settings.idleSeconds} s, ledger ${settings.ledgerRows} rows${settings.quick ? ', quick run' : ''}${settings.hubResume ? '' : ", dev hub without resume-v1 (the real hub's dialect)"}`,
  );

  let rig: Rig | undefined;
  const helperArgs = { ledgerRows: settings.ledgerRows, ...(settings.gpuDurationMs ? { gpuDurationMs: settings.gpuDurationMs } : {}) };
  let partial: Omit<BenchResults, 'helpers' | 'seconds' | 'machine' | 'settings' | 'load'> & { gpuBench: HelperBench[] };
  try {
    rig = await startRig({ hubResume: settings.hubResume });
    say(
      `rig up: bench engine ${rig.engineUrl} (pid ${rig.engine.pid}), dev hub ${rig.hub.url}, agent pid ${rig.agent.pid}, forwarder pid ${rig.forwarder.pid}`,
    );
    say(`engine clock offset ${rig.offset.offsetMs.toFixed(3)} ms (probe round trip ${rig.offset.rttMs.toFixed(3)} ms)`);
    if (settings.only === 'latency') {
      await latencyOnly(rig, settings, say);
      return 0;
    }
    if (settings.only === 'cpu') {
      await cpuShares(rig, settings, say);
      return 0;
    }
    if (settings.only === 'metrics') {
      await metricsCost(rig, settings, say);
      return 0;
    }
    if (settings.only === 'models') {
      await modelsBench(rig, settings, say);
      return 0;
    }
    if (settings.only === 'weights') {
      await weightsBench(rig, settings, say);
      return 0;
    }

    say(`idle for ${settings.idleSeconds} s…`);
    const idle = await idleCost(rig, settings.idleSeconds);
    say(
      `idle: agent ${idle.agent.cpuPercent}% CPU, RSS ${idle.agent.rssMaxMb} MB; forwarder ${idle.forwarder.cpuPercent}%, ${idle.forwarder.rssMaxMb} MB; ` +
        `bare node ${idle.bareNode.rssMaxMb} MB, node+tsx ${idle.nodeWithTsx.rssMaxMb} MB, ` +
        (idle.bundledAgent
          ? `agent without tsx ${idle.bundledAgent.cpuPercent}% CPU, ${idle.bundledAgent.rssMaxMb} MB`
          : `agent without tsx skipped: ${idle.bundledAgentSkipped}`),
    );

    // The GPU sampler's bench runs while the memory phase waits out the agent's retention window.
    let gpuBench: HelperBench[] = [];
    const memory = await memoryUnderLoad(rig, settings, async () => {
      gpuBench = await runHelperBenches(['gpu'], helperArgs, process.env, say);
    });
    say(
      `memory at ${memory.streams} streams: agent peak ${memory.agent.peak.join(', ')} MB, after ${memory.agent.after.join(', ')} MB, ` +
        `settled ${memory.agent.settled} MB, again ${memory.agent.again?.after.join(', ')} MB; forwarder peak ${memory.forwarder.peak.join(', ')}, after ${memory.forwarder.after.join(', ')}`,
    );

    const ttft = await ttftSequential(rig, settings.ttftRequests);
    say(`time to first token p50: direct ${ttft.direct.p50} ms, agent ${ttft.agent.p50} ms (+${ttft.addedP50}), forwarder ${ttft.forwarder.p50} ms`);

    const relay: RelayLevel[] = [];
    const levels: Array<[number, StepPhase]> = [
      [1, 'batched'],
      [16, 'batched'],
      [64, 'batched'],
      [16, 'staggered'],
      [64, 'staggered'],
    ];
    // At 64 streams a second agent with its ledger unavailable takes its turn too (diagnostic).
    const stopNoLedger = await rig.startNoLedgerAgent();
    try {
      for (const [n, phase] of levels) {
        const l = await relayLevel(rig, settings, n, phase, n === 64 ? ['agentNoLedger'] : []);
        relay.push(l);
        say(
          `relay ${n} stream(s) ${phase}, ${l.agent.n} chunks: p50 direct ${l.direct.p50} / agent ${l.agent.p50} (+${l.addedP50}) / forwarder ${l.forwarder.p50} ms; ` +
            `p99 ${l.direct.p99} / ${l.agent.p99} (+${l.addedP99}) / ${l.forwarder.p99} ms` +
            (l.noLedger ? `; agent without ledger +${l.noLedger.addedP50} / +${l.noLedger.addedP99} ms` : ''),
        );
        if (n === 64) for (const line of levelLines(l).slice(1)) say(line);
      }
    } finally {
      await stopNoLedger();
    }

    const tp = await throughput(rig, settings);
    say(
      `throughput (${tp.streams} streams, full speed): agent ${tp.agent} chunks/s, forwarder ${tp.forwarder}, direct ${tp.direct} -> ${Math.round(tp.ratioToForwarder * 100)}% of the forwarder; ` +
        `CPU per chunk: agent ${tp.cpuUsPerChunk.agent} µs, forwarder ${tp.cpuUsPerChunk.forwarder} µs`,
    );

    // Fetching and sizing models (docs/models.md): printed beside its baselines; a failure is said, not fatal.
    await modelsBench(rig, settings, say).catch((e: Error) => say(`models: skipped: ${e.message}`));

    const targets = checkTargets({ relay, ttft, throughput: tp, idle, memory });
    for (const t of targets) say(`target ${t.figure}: ${t.value} ${t.unit} (${t.target}) ${t.met ? 'met' : 'MISSED'}`);
    const kinds = new Set<ProfileKind>();
    for (const t of targets) if (!t.met && t.profile !== 'none') kinds.add(t.profile);
    if (settings.forceProfile) {
      kinds.add('load');
      kinds.add('idle');
    }
    const profiles: RelayProfile[] = [];
    for (const kind of kinds) {
      for (const who of kind === 'load' ? (['agent', 'forwarder'] as const) : (['agent'] as const)) {
        say(`profiling the ${who} (${kind})…`);
        const p = await profileRelay(rig, settings, who, kind);
        profiles.push(p);
        say(
          `profile ${who} ${kind}: ${p.busyMs} ms busy${p.busyUsPerChunk ? ` (${p.busyUsPerChunk} µs per chunk)` : ''}; top: ` +
            p.top
              .slice(0, 5)
              .map((f) => `${f.frame} ${f.percent}%`)
              .join('; '),
        );
      }
    }
    partial = {
      gpuBench,
      clock: rig.offset,
      ttft,
      relay,
      throughput: tp,
      memory,
      idle,
      targets,
      profiles,
      ...(kinds.size === 0 ? { profileSkipped: 'every CPU target was met (BENCH_PROFILE=1 takes them anyway)' } : {}),
    };
  } finally {
    await rig?.close();
  }

  const { gpuBench, ...figures } = partial;
  const helpers = [...gpuBench, ...(await runHelperBenches(['ledger', 'ui', 'soak'], helperArgs, process.env, say))];
  const machineLoad = load.finish();
  if (machineLoad.warning) say(`note: ${machineLoad.warning}`);
  const results: BenchResults = { machine: m, load: machineLoad, settings, seconds: (performance.now() - t0) / 1000, ...figures, helpers };
  const files = writeResults(results);
  say(`wrote ${files.json} and ${files.md}`);
  if (!settings.updateReadme) say('README table not updated (BENCH_NO_README=1)');
  else if (settings.quick) say('README table not updated (quick run; run without BENCH_QUICK to update it)');
  else {
    const why = updateReadme(results);
    say(why ? `README table not updated: ${why}` : 'README table updated');
  }
  process.stdout.write(`\n${renderMarkdown(results)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (e: Error) => {
    process.stderr.write(`bench failed: ${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
