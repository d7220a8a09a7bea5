// The bench's event-loop probe, preloaded into the relay processes it measures (the agent and the minimal
// forwarder alike) with `node --import ./bench/loop-probe.mjs …`. Nothing of it is in the agent itself: a
// user's agent never runs it. Plain JavaScript so it loads without tsx (the agent runs from its bundle).
//
// It keeps, from the moment it loads:
// - an event-loop delay histogram (perf_hooks.monitorEventLoopDelay, 1 ms resolution): how late a 1 ms
//   timer fires, i.e. how long the loop was busy in one go. Values include the resolution.
// - event-loop utilisation (the share of the window the loop was not idle),
// - CPU time of the process (user + system, all threads: V8's GC helpers too) and, on Linux, of its main thread,
// - every GC pause (a PerformanceObserver on 'gc'): count, total and longest, by kind, and when each began.
// The delay histogram runs from the first SIGUSR2 on. On SIGUSR2 it writes one line `loop-probe {json}` to stdout with the figures since the last signal and
// starts over, so the bench reads exactly the window of one measurement (signal, workload, signal).
import { monitorEventLoopDelay, performance, PerformanceObserver, constants } from 'node:perf_hooks';
import fs from 'node:fs';
import v8 from 'node:v8';

const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

// The 1 ms timer costs ~2 % of a core, so it starts with the first SIGUSR2: the idle figures, measured
// before any, are the process's own.
const delay = monitorEventLoopDelay({ resolution: 1 });
let elu = performance.eventLoopUtilization();
let cpu = process.cpuUsage();
let gc = {};
/** GC pauses longer than 1 ms, as [kind, ms] (the last 200). */
let longGc = [];
/**
 * Every GC pause of the window as [start, ms], start on the wall clock in ms (performance.timeOrigin +
 * startTime, the clock the bench stamps chunks with), the first 5,000: which chunks waited through a pause.
 */
let pauses = [];

new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = KINDS[e.detail?.kind ?? e.kind] ?? 'other';
    const g = (gc[kind] ??= { count: 0, totalMs: 0, maxMs: 0 });
    g.count++;
    g.totalMs += e.duration;
    if (e.duration > g.maxMs) g.maxMs = e.duration;
    if (e.duration > 1 && longGc.length < 200) longGc.push([kind, Math.round(e.duration * 100) / 100]);
    if (pauses.length < 5000) pauses.push([Math.round((performance.timeOrigin + e.startTime) * 1000) / 1000, Math.round(e.duration * 1000) / 1000]);
  }
}).observe({ entryTypes: ['gc'] });

const ms = (ns) => Math.round((ns / 1e6) * 1000) / 1000;

/** CPU time of the main (JavaScript) thread alone, ns, from Linux's schedstat; undefined elsewhere. */
function mainThreadNs() {
  try {
    return Number(fs.readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
}
let mainNs = mainThreadNs();

process.on('SIGUSR2', () => {
  delay.enable(); // a no-op once on
  const now = performance.eventLoopUtilization(elu);
  const round = (x) => Math.round(x * 1000) / 1000;
  const figures = {
    pid: process.pid,
    windowMs: Math.round(now.idle + now.active),
    utilization: round(now.utilization),
    delay: {
      count: delay.count,
      p50: ms(delay.percentile(50)),
      p90: ms(delay.percentile(90)),
      p99: ms(delay.percentile(99)),
      p999: ms(delay.percentile(99.9)),
      max: ms(delay.max),
    },
    gc: Object.fromEntries(Object.entries(gc).map(([k, v]) => [k, { count: v.count, totalMs: round(v.totalMs), maxMs: round(v.maxMs) }])),
    longGc,
    pauses,
    cpuMs: (() => {
      const d = process.cpuUsage(cpu);
      return round((d.user + d.system) / 1000);
    })(),
    // The rest of cpuMs is the other threads': V8's GC and compiler helpers, libuv's pool, workers.
    ...(() => {
      const now = mainThreadNs();
      return now !== undefined && mainNs !== undefined ? { mainCpuMs: round((now - mainNs) / 1e6) } : {};
    })(),
    rssMb: Math.round((process.memoryUsage.rss() / 1048576) * 10) / 10,
    // Where the RSS is: V8's heap spaces (size reserved, MB) and memory outside the heap (Buffers).
    spacesMb: Object.fromEntries(
      v8.getHeapSpaceStatistics().map((sp) => [sp.space_name.replace(/_space$/, ''), Math.round((sp.space_size / 1048576) * 10) / 10]),
    ),
    externalMb: Math.round((process.memoryUsage().external / 1048576) * 10) / 10,
  };
  process.stdout.write(`loop-probe ${JSON.stringify(figures)}\n`);
  delay.reset();
  elu = performance.eventLoopUtilization();
  cpu = process.cpuUsage();
  mainNs = mainThreadNs();
  gc = {};
  longGc = [];
  pauses = [];
});
