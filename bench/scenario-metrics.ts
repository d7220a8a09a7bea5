// BENCH_ONLY=metrics: what the Prometheus metrics cost the relay. Two agents of the same build on the rig's
// hub and engine: the rig's agent as users run it by default (no console, no metrics), and a second one
// with `--console 127.0.0.1:0 --metrics` whose /metrics is scraped once a second (with the console token,
// as Prometheus would) for the whole run. Both relay the throughput load (64 streams, engine at full speed)
// in alternating turns, so load on the machine falls on both alike; the figure is the metrics agent's
// chunks/s over the plain agent's, with each one's spread over its turns as the noise band. Prints; writes
// nothing.
import { AGENT_NAME } from './agent-home';
import { treeCpuSeconds } from './proc-stats';
import { METRICS_AGENT_NAME, type Rig } from './rig';
import type { BenchSettings } from './settings';
import { median, ratio, round } from './stats';

interface Turn {
  chunksPerSecond: number;
  cpuUsPerChunk: number;
}

/** n concurrent streams through the named provider at full engine speed: chunks/s at the hub and the relay's CPU per chunk. */
async function turn(rig: Rig, provider: string, pid: number, streams: number, chunks: number): Promise<Turn> {
  const cpu0 = treeCpuSeconds(pid);
  const traces = await Promise.all(Array.from({ length: streams }, () => rig.driver.stream(provider, chunks)));
  const failed = traces.find((t) => t.error);
  if (failed) throw new Error(`${provider}: a stream failed: ${failed.error}`);
  const start = Math.min(...traces.map((t) => t.sentAt));
  const end = Math.max(...traces.map((t) => t.endAt ?? Number.NaN));
  const n = traces.reduce((s, t) => s + t.chunks, 0);
  return { chunksPerSecond: round(n / ((end - start) / 1000), 0), cpuUsPerChunk: round(((treeCpuSeconds(pid) - cpu0) * 1e6) / n, 1) };
}

function spread(xs: number[]): string {
  const m = median(xs);
  return `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))} (±${round(((Math.max(...xs) - Math.min(...xs)) / 2 / m) * 100, 1)}%)`;
}

export async function metricsCost(rig: Rig, s: BenchSettings, say: (line: string) => void): Promise<void> {
  const m = await rig.startMetricsAgent();
  let scrapes = 0;
  let scrapeFailures = 0;
  const scrapeMs: number[] = [];
  let bytes = 0;
  const scrape = async (): Promise<void> => {
    const t0 = performance.now();
    try {
      const res = await fetch(m.metricsUrl, { headers: { authorization: `Bearer ${m.token}` } });
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      bytes = text.length;
      scrapes++;
      scrapeMs.push(performance.now() - t0);
    } catch {
      scrapeFailures++;
    }
  };
  const scraper = setInterval(() => void scrape(), 1000);
  try {
    const reps = s.quick ? 3 : 6;
    // Turns of several seconds each, so every turn of the scraped agent takes several scrapes.
    const chunks = s.quick ? 800 : 2000;
    const streams = s.throughputStreams;
    const agentPid = rig.agent.pid;
    const mPid = m.pid;
    say(
      `metrics: ${reps} turns each of ${streams} streams × ${chunks} chunks at full speed; ${AGENT_NAME} (no metrics) and ${METRICS_AGENT_NAME} (/metrics scraped every second)`,
    );
    await rig.setStep(0);
    await turn(rig, AGENT_NAME, agentPid, streams, 50); // warm-up
    await turn(rig, METRICS_AGENT_NAME, mPid, streams, 50);
    const plain: Turn[] = [];
    const scraped: Turn[] = [];
    for (let r = 0; r < reps; r++) {
      // Alternate which goes first, so a drift in the machine's load does not favour one.
      const order = r % 2 === 0 ? (['plain', 'scraped'] as const) : (['scraped', 'plain'] as const);
      for (const who of order) {
        if (who === 'plain') plain.push(await turn(rig, AGENT_NAME, agentPid, streams, chunks));
        else scraped.push(await turn(rig, METRICS_AGENT_NAME, mPid, streams, chunks));
      }
    }
    await rig.setStep(s.stepMs);
    const p = plain.map((t) => t.chunksPerSecond);
    const q = scraped.map((t) => t.chunksPerSecond);
    say(`metrics: plain agent ${median(p)} chunks/s (turns ${spread(p)}), CPU ${median(plain.map((t) => t.cpuUsPerChunk))} µs/chunk`);
    say(`metrics: scraped agent ${median(q)} chunks/s (turns ${spread(q)}), CPU ${median(scraped.map((t) => t.cpuUsPerChunk))} µs/chunk`);
    say(
      `metrics: scraped / plain = ${ratio(median(q), median(p))} (throughput), ${ratio(median(scraped.map((t) => t.cpuUsPerChunk)), median(plain.map((t) => t.cpuUsPerChunk)))} (CPU per chunk)`,
    );
    scrapeMs.sort((x, y) => x - y);
    say(
      `metrics: ${scrapes} scrapes (${scrapeFailures} failed), ${Math.round(bytes / 1024)} kB each, ` +
        `p50 ${round(scrapeMs[Math.floor(scrapeMs.length / 2)] ?? NaN, 1)} ms, max ${round(scrapeMs[scrapeMs.length - 1] ?? NaN, 1)} ms`,
    );
  } finally {
    clearInterval(scraper);
    await m.stop();
  }
}
