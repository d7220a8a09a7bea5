// Bench settings, from environment variables so a quick variant runs with the same command:
//   BENCH_QUICK=1            shorter everything (about 1 minute; figures are noisier)
//   BENCH_IDLE_SECONDS=n     idle window (default 60)
//   BENCH_LEDGER_ROWS=n      rows for the ledger bench (default 300,000; quick 20,000)
//   BENCH_PROFILE=1          take the CPU profiles even when every target is met
//   BENCH_NO_README=1        do not rewrite the README table
//   BENCH_SOAK=1             also run the fault suite's soak (bench/soak.ts), when it exists
//   BENCH_ONLY=latency       only the 64-stream latency levels (batched, staggered), printed, nothing
//                            written: the quick loop for relay work (about 30 s; BENCH_LATENCY_ROUNDS=n repeats)
//   BENCH_ONLY=cpu           only the CPU of relaying per chunk and per request, user and system, with the
//                            engine's and the dev hub's, in paired turns (bench/scenario-cpu.ts; about 1 minute)
//   BENCH_ONLY=metrics       only the cost of Prometheus metrics: relay throughput of an agent whose /metrics is
//                            scraped every second against the same build without metrics, in alternating
//                            turns (bench/scenario-metrics.ts; about 1 minute)
//   BENCH_ONLY=weights       only what proving weights costs: the agent's hasher against sha256sum on a 1 GiB
//                            file, and the relay's added p99 while the agent hashes against none, in
//                            alternating turns (bench/scenario-weights.ts; about 2 minutes)
//   BENCH_ONLY=models        only what fetching and sizing models costs: `models download` against curl on the
//                            same 1 GiB file from one local server, the relay's added p99 during a download
//                            against none, and the fit estimate beside llama-server's own buffer sizes
//                            (bench/scenario-models.ts; about 3 minutes)
//   BENCH_AGENT_B=<launcher> A/B: a second agent from another build takes its turn beside the agent
//                            (make one with `node --import tsx bench/ab.ts <label>`; see docs/performance.md)
//   BENCH_HUB_RESUME=0       the dev hub in the real hub's dialect: no resume-v1 in its register ack, so the
//                            agent keeps no finished answers for resuming (the Go hub has no resume)
import { z } from 'zod';

export interface BenchSettings {
  quick: boolean;
  idleSeconds: number;
  ledgerRows: number;
  forceProfile: boolean;
  updateReadme: boolean;
  /** Decode step for the latency runs (ms): 50 tokens/s per stream. */
  stepMs: number;
  /** Chunks per stream for the relay-overhead runs, by concurrency. */
  relayChunks: Record<number, number>;
  ttftRequests: number;
  throughputStreams: number;
  throughputChunks: number;
  throughputReps: number;
  memoryRounds: number;
  memoryChunks: number;
  /** GPU sampler bench duration per mode (undefined: its default). */
  gpuDurationMs?: number;
  /** Only one part, printed: the 64-stream latency levels (latency), the CPU shares (cpu), the metrics' cost (metrics) or the weights' (weights). */
  only?: 'latency' | 'cpu' | 'metrics' | 'weights' | 'models';
  /** Rounds of the latency-only run. */
  latencyRounds: number;
  /** A/B: the launcher of another build of the agent, run beside it (BENCH_AGENT_B). */
  agentB?: string;
  /** Whether the dev hub offers resume-v1 (BENCH_HUB_RESUME, default on). */
  hubResume: boolean;
}

const flag = z.enum(['0', '1', 'true', 'false', '']).optional();
const count = z.coerce.number().int().positive().optional();
const envSchema = z.object({
  BENCH_QUICK: flag,
  BENCH_IDLE_SECONDS: z.coerce.number().min(1).max(3600).optional(),
  BENCH_LEDGER_ROWS: count,
  BENCH_PROFILE: flag,
  BENCH_NO_README: flag,
  BENCH_ONLY: z.enum(['latency', 'cpu', 'metrics', 'weights', 'models', '']).optional(),
  BENCH_LATENCY_ROUNDS: z.coerce.number().int().min(1).max(20).optional(),
  BENCH_AGENT_B: z.string().optional(),
  BENCH_HUB_RESUME: flag,
});

const on = (v: string | undefined): boolean => v === '1' || v === 'true';

export function readSettings(env: NodeJS.ProcessEnv = process.env): BenchSettings {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new Error(`bad bench setting ${String(i?.path[0])}: ${i?.message}. See the top of bench/settings.ts.`);
  }
  const e = parsed.data;
  const quick = on(e.BENCH_QUICK);
  return {
    quick,
    idleSeconds: e.BENCH_IDLE_SECONDS ?? (quick ? 10 : 60),
    ledgerRows: e.BENCH_LEDGER_ROWS ?? (quick ? 20_000 : 300_000),
    forceProfile: on(e.BENCH_PROFILE),
    updateReadme: !on(e.BENCH_NO_README),
    stepMs: 20,
    relayChunks: quick ? { 1: 100, 16: 50, 64: 50 } : { 1: 250, 16: 120, 64: 120 },
    ttftRequests: quick ? 50 : 200,
    throughputStreams: 64,
    throughputChunks: quick ? 150 : 400,
    throughputReps: quick ? 1 : 3,
    memoryRounds: 5,
    memoryChunks: quick ? 50 : 100,
    ...(quick ? { gpuDurationMs: 3000 } : {}),
    ...(e.BENCH_ONLY ? { only: e.BENCH_ONLY } : {}),
    latencyRounds: e.BENCH_LATENCY_ROUNDS ?? 1,
    ...(e.BENCH_AGENT_B ? { agentB: e.BENCH_AGENT_B } : {}),
    hubResume: e.BENCH_HUB_RESUME !== '0' && e.BENCH_HUB_RESUME !== 'false',
  };
}
