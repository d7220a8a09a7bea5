// The fault soak: the agent as users run it (`node bin/swan-provider.js run`, a child process, its wall
// clock under libfaketime) serving mixed hub traffic for SOAK_MINUTES (default 30) while faults come at
// random: the engine killed (its port closed, its connections cut) and back a few seconds later, the hub
// dropping the link, the wall clock stepped by minutes to hours and back. The dev hub and the engine stand-in
// run in this process. At the end the agent is stopped and its ledger read beside what the hub was told:
//   lost        finals the hub got (stream_end, or the ack of a non-stream answer) with no ledger row
//   duplicated  request ids with two different finals, or two rows
//   RSS growth  MB per hour after warm-up (least squares over the samples), and open fds first and last.
// Run: npm run soak   (SOAK_MINUTES=10 npm run soak for a shorter one; SOAK_SEED to vary the faults)
// Diagnostic knobs (docs/soak.md): SOAK_FAULTS=0 serves the same traffic with no fault; SOAK_HEAP_SNAPSHOTS=dir
// starts the agent with bench/heap-probe.mjs and has it collect garbage and log process.memoryUsage() into
// dir/memory.jsonl every minute, and write a heap snapshot at the minutes SOAK_SNAPSHOT_MINUTES lists (default:
// the end of warm-up and the end); bench/heap-compare.ts compares snapshots by constructor.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { startDevHub, type DevHub } from '../src/cli/dev-hub';
import { startTestEngine, type TestEngine } from '../test/support/engine-server';
import { LIBFAKETIME, SteppedClock } from '../test/support/faults/faketime';
import { generatedText } from '../test/support/traces';
import { mulberry32 } from '../test/support/rng';
import { procStatus, streamedText, waitFor } from './proc';
import { writeConfigToml } from '../test/support/config-toml';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'sk-prov-fault-soak-0000000000';
const MODEL = 'soak/steady';
const SAMPLE_EVERY_MS = 10_000;
const WORKERS = 6;
/** Mean time between two faults; each is drawn at random. */
const FAULT_EVERY_MS = 20_000;

type Fault = 'engine_kill' | 'hub_drop' | 'clock_step';

export interface FaultSoakReport {
  minutes: number;
  seed: number;
  requests: number;
  served: number;
  /** Ended with a clear error the faults ask for (engine gone, link down, capacity). */
  failedExpected: number;
  /** Ended with an error or text that should not happen. */
  failedUnexpected: number;
  cancelled: number;
  faults: Record<Fault, number>;
  /** Distinct finals the hub got. */
  finals: number;
  ledgerRows: number;
  lost: number;
  duplicated: number;
  /**
   * Ids the agent sent something for with no final at the hub: the hub's own cancels (after a cancel the agent
   * sends nothing more, not even a final: Go cancel_test.go) and requests the hub gave up on across a drop.
   * Informational: their rows are in the ledger all the same.
   */
  unfinished: number;
  rssStartMb: number;
  rssEndMb: number;
  rssPeakMb: number;
  warmupMinutes: number;
  rssGrowthMbPerHour: number;
  fdsStart: number;
  fdsEnd: number;
  fdsMax: number;
  wallClockStepsLogged: number;
  agentExitCode: number | null;
  stopSeconds: number;
  unexpectedErrors: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Least-squares slope of y over x (per unit of x). */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const num = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return den ? num / den : 0;
}

function writeHome(hub: DevHub, engine: TestEngine): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-fault-soak-'));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [MODEL]: { endpoint: engine.url } }, null, 2));
  writeConfigToml(home, {
    API: { NodeName: 'fault-soak' },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: KEY },
    Agent: {
      HeartbeatIntervalSeconds: 2,
      PingIntervalSeconds: 2,
      ReadTimeoutSeconds: 10,
      HealthCheckIntervalSeconds: 2,
      ReconnectMaxBackoffSeconds: 1,
      ResumeGraceSeconds: 5,
      GpuSampleIntervalSeconds: 5,
      MaxConcurrentPerEndpoint: 4,
      MaxQueuePerModel: 8,
      EngineHeadersTimeoutSeconds: 10,
      Discovery: false,
    },
  });
  return home;
}

type Outcome = 'served' | 'failedExpected' | 'failedUnexpected' | 'cancelled';

/** One request of the mix; resolves with how it ended (never rejects). */
async function oneRequest(hub: DevHub, rand: () => number, errors: string[]): Promise<Outcome> {
  const roll = rand();
  const n = 10 + Math.floor(rand() * 150);
  const post = (body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
    fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const note = (what: string): Outcome => {
    if (errors.length < 30) errors.push(what);
    return 'failedUnexpected';
  };
  // What a fault explains: the engine gone (502/503/504), the link down (404: no provider), capacity (429).
  const expected = (status: number) => [404, 429, 499, 502, 503, 504].includes(status);
  try {
    if (roll < 0.6) {
      const res = await post({ model: MODEL, stream: true, max_tokens: n, messages: [{ role: 'user', content: 'soak' }] });
      const text = await res.text();
      if (res.status !== 200) return expected(res.status) ? 'failedExpected' : note(`stream HTTP ${res.status}: ${text.slice(0, 120)}`);
      const { content, error } = streamedText(text);
      // A stream cut by an engine kill ends with an error and a clean prefix of the text.
      if (error) return generatedText(n).startsWith(content) ? 'failedExpected' : note(`stream error with wrong text: ${error}`);
      return content === generatedText(n) ? 'served' : note('stream text lost or doubled');
    }
    if (roll < 0.85) {
      const res = await post({ model: MODEL, max_tokens: n, messages: [{ role: 'user', content: 'soak' }] });
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }>; error?: { message?: string } };
      if (res.status !== 200) return expected(res.status) ? 'failedExpected' : note(`non-stream HTTP ${res.status}: ${body.error?.message ?? ''}`);
      return body.choices?.[0]?.message?.content === generatedText(n) ? 'served' : note('non-stream text wrong');
    }
    // The client goes away mid-stream: the hub cancels.
    const ctl = new AbortController();
    const res = await post({ model: MODEL, stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'soak' }] }, ctl.signal);
    if (res.status !== 200) {
      await res.body?.cancel();
      return expected(res.status) ? 'failedExpected' : note(`cancel-case HTTP ${res.status}`);
    }
    const reader = res.body!.getReader();
    await reader.read();
    ctl.abort();
    await reader.cancel().catch(() => undefined);
    return 'cancelled';
  } catch (e) {
    // A link drop can cut the hub's own HTTP answer: the hub's business, counted as expected.
    return /terminated|socket|aborted|fetch failed/i.test((e as Error).message) ? 'failedExpected' : note(`client error: ${(e as Error).message}`);
  }
}

/** The finals the hub got, distinct (a resume replay of the same final counts once), and the ids answered into. */
function hubFinals(hub: DevHub): { finals: Map<string, Set<string>>; seen: Set<string> } {
  const finals = new Map<string, Set<string>>();
  const seen = new Set<string>();
  for (const m of hub.received) {
    if (!m.requestId) continue;
    seen.add(m.requestId);
    // A stream's final is its stream_end; a non-stream answer's is the ack carrying status_code (Go's InferenceResponse).
    const final = m.type === 'stream_end' || (m.type === 'ack' && 'status_code' in m.payload);
    if (!final) continue;
    const set = finals.get(m.requestId) ?? new Set<string>();
    set.add(`${m.type}:${String(m.payload.seq ?? '')}`);
    finals.set(m.requestId, set);
  }
  return { finals, seen };
}

export interface SoakOptions {
  /** false: the same traffic with no fault (SOAK_FAULTS=0). */
  faults?: boolean;
  /** Heap snapshots into this folder (SOAK_HEAP_SNAPSHOTS), at these minutes after the agent registered. */
  heapDir?: string;
  snapshotMinutes?: number[];
}

export async function faultSoak(minutes = 30, seed = 0x43b, opts: SoakOptions = {}): Promise<FaultSoakReport> {
  const withFaults = opts.faults ?? true;
  const heapDir = opts.heapDir ? path.resolve(opts.heapDir) : undefined;
  if (heapDir) fs.mkdirSync(heapDir, { recursive: true });
  const rand = mulberry32(seed);
  const hub = await startDevHub({ token: KEY, reattachMs: 30_000 });
  const engine = await startTestEngine({ models: [MODEL], mode: { generate: 100_000, delayMs: 2 } });
  const home = writeHome(hub, engine);
  const clock = LIBFAKETIME ? new SteppedClock(home) : undefined;
  if (!clock) console.error('fault soak: libfaketime is absent (apt-get install faketime): no clock steps this run');
  let agent: ChildProcess | undefined;
  const stderr: string[] = [];
  try {
    agent = spawn(
      process.execPath,
      [path.join(repo, 'bin', 'swan-provider.js'), 'run', '--config', path.join(home, 'config.toml'), '--home', home, '--no-discovery', '--quiet'],
      {
        cwd: repo,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          ...(clock?.env() ?? {}),
          ...(heapDir ? { NODE_OPTIONS: `--import ${pathToFileURL(path.join(repo, 'bench', 'heap-probe.mjs')).href}`, SOAK_HEAP_DIR: heapDir } : {}),
        },
      },
    );
    agent.stderr!.on('data', (d: Buffer) => {
      stderr.push(d.toString());
      if (stderr.length > 200) stderr.shift();
    });
    const pid = agent.pid!;
    const exited = new Promise<number | null>((resolve) => agent!.once('exit', (code) => resolve(code)));
    const connected = () => hub.providers().some((p) => p.connected && p.models.includes(MODEL));
    await waitFor(connected, 'the agent to register', 120_000);
    const t0 = performance.now();
    const start = procStatus(pid);
    const samples: Array<{ atS: number; rssMb: number; fds: number }> = [];
    const r: FaultSoakReport = {
      minutes,
      seed,
      requests: 0,
      served: 0,
      failedExpected: 0,
      failedUnexpected: 0,
      cancelled: 0,
      faults: { engine_kill: 0, hub_drop: 0, clock_step: 0 },
      finals: 0,
      ledgerRows: 0,
      lost: 0,
      duplicated: 0,
      unfinished: 0,
      rssStartMb: start.rssMb,
      rssEndMb: 0,
      rssPeakMb: start.rssMb,
      warmupMinutes: Math.min(5, minutes / 3),
      rssGrowthMbPerHour: 0,
      fdsStart: start.fds,
      fdsEnd: 0,
      fdsMax: start.fds,
      wallClockStepsLogged: 0,
      agentExitCode: null,
      stopSeconds: 0,
      unexpectedErrors: [],
    };
    const sample = (): void => {
      const s = procStatus(pid);
      r.rssPeakMb = Math.max(r.rssPeakMb, s.rssMb);
      r.fdsMax = Math.max(r.fdsMax, s.fds);
      samples.push({ atS: Math.round((performance.now() - t0) / 1000), ...s });
      console.error(
        `fault soak ${samples.at(-1)!.atS}s: RSS ${s.rssMb} MB, ${s.fds} fds, ${r.requests} requests (${r.served} served), faults ${JSON.stringify(r.faults)}`,
      );
    };
    const endAt = t0 + minutes * 60_000;
    const sampler = setInterval(sample, SAMPLE_EVERY_MS);
    let offsetS = 0;
    // The faults, one at a time at random intervals; each undone before the next.
    const faults = (async () => {
      const kinds: Fault[] = clock ? ['engine_kill', 'hub_drop', 'clock_step'] : ['engine_kill', 'hub_drop'];
      while (withFaults && performance.now() < endAt - 15_000) {
        await sleep(FAULT_EVERY_MS * (0.5 + rand()));
        if (performance.now() >= endAt - 15_000) break;
        const kind = kinds[Math.floor(rand() * kinds.length)]!;
        if (kind !== 'clock_step') r.faults[kind]++;
        if (kind === 'engine_kill') {
          await engine.setMode('down');
          await sleep(1000 + rand() * 4000);
          await engine.setMode({ generate: 100_000, delayMs: 2 });
        } else if (kind === 'hub_drop') {
          hub.dropProviders();
        } else {
          // A step of one minute to two hours, back or forward; the next one may undo it.
          const step = Math.round((60 + rand() * 7140) * (rand() < 0.5 ? -1 : 1));
          const next = Math.max(-7200, Math.min(7200, offsetS + step));
          // Counted when the clock moved (a draw past the ±2 h bound may leave it where it is).
          if (Math.abs(next - offsetS) >= 2) r.faults.clock_step++;
          offsetS = next;
          clock!.set(offsetS);
        }
      }
    })();
    const worker = async (): Promise<void> => {
      while (performance.now() < endAt) {
        if (!hub.providers().some((p) => p.connected)) {
          await sleep(50);
          continue;
        }
        const outcome = await oneRequest(hub, rand, r.unexpectedErrors);
        r.requests++;
        r[outcome]++;
      }
    };
    // The heap mode: every minute a full collection and a memoryUsage line in the agent; at each chosen minute a
    // heap snapshot too.
    const probe = async (label: string): Promise<void> => {
      fs.writeFileSync(path.join(heapDir!, 'next-label'), label);
      const counts = { requests: r.requests, served: r.served, failedExpected: r.failedExpected, cancelled: r.cancelled, faults: r.faults };
      const rssMb = procStatus(pid).rssMb;
      process.kill(pid, 'SIGWINCH');
      await waitFor(() => fs.existsSync(path.join(heapDir!, `${label}.done`)), `heap probe ${label}`, 600_000);
      fs.appendFileSync(path.join(heapDir!, 'soak.jsonl'), JSON.stringify({ label, rssMbBefore: rssMb, ...counts }) + '\n');
    };
    const snapshots = (async () => {
      if (!heapDir) return;
      const at = new Set(opts.snapshotMinutes ?? [r.warmupMinutes, minutes - 0.5]);
      const marks = [...new Set([...at, ...Array.from({ length: Math.floor(minutes) }, (_, i) => i + 1)])].filter((m) => m < minutes).sort((a, b) => a - b);
      for (const m of marks) {
        await sleep(Math.max(0, t0 + m * 60_000 - performance.now()));
        const label = `m${String(m).replace('.', '_')}`;
        await probe(at.has(m) ? label : `${label}.mem`);
        if (at.has(m)) console.error(`fault soak: heap snapshot ${label} at ${r.requests} requests`);
      }
    })();
    await Promise.all([faults, snapshots, ...Array.from({ length: WORKERS }, () => worker())]);
    clearInterval(sampler);
    // Settle: reconnected, the engine back, answers delivered; then a normal stop, timed.
    await waitFor(connected, 'the agent to be connected', 60_000);
    await sleep(10_000);
    sample();
    const end = procStatus(pid);
    r.rssEndMb = end.rssMb;
    r.fdsEnd = end.fds;
    const warm = samples.filter((s) => s.atS >= r.warmupMinutes * 60);
    r.rssGrowthMbPerHour = Math.round(slope(warm.map((s) => [s.atS / 3600, s.rssMb])) * 10) / 10;
    const stopT0 = performance.now();
    agent.kill('SIGTERM');
    r.agentExitCode = await exited;
    r.stopSeconds = Math.round((performance.now() - stopT0) / 100) / 10;

    // Reconcile: what the hub was told beside what the ledger holds.
    const { finals, seen } = hubFinals(hub);
    const db = new Database(path.join(home, 'ledger.sqlite'), { readonly: true });
    const rows = db.prepare("SELECT request_id FROM usage WHERE source = 'hub'").all() as Array<{ request_id: string }>;
    db.close();
    const rowCount = new Map<string, number>();
    for (const row of rows) rowCount.set(row.request_id, (rowCount.get(row.request_id) ?? 0) + 1);
    r.finals = finals.size;
    r.ledgerRows = rows.length;
    r.lost = [...finals.keys()].filter((id) => !rowCount.has(id)).length;
    r.duplicated = [...finals.values()].filter((s) => s.size > 1).length + [...rowCount.values()].filter((c) => c > 1).length;
    r.unfinished = [...seen].filter((id) => !finals.has(id)).length;
    const logFile = path.join(home, 'logs', 'agent.jsonl');
    r.wallClockStepsLogged = fs.existsSync(logFile)
      ? fs
          .readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"wall_clock_step"')).length
      : 0;
    return r;
  } finally {
    if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
    await hub.close();
    await engine.close();
    if (stderr.some((l) => /ERROR/.test(l))) console.error(`agent stderr (last lines):\n${stderr.join('').split('\n').slice(-20).join('\n')}`);
    fs.rmSync(home, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const minutes = Number(process.env.SOAK_MINUTES ?? 30);
  const seed = Number(process.env.SOAK_SEED ?? 0x43b);
  if (!(minutes > 0) || !Number.isInteger(seed)) {
    console.error('usage: SOAK_MINUTES=30 SOAK_SEED=1083 npm run soak   (minutes: a positive number; seed: a whole number)');
    process.exit(2);
  }
  const snapshotMinutes = process.env.SOAK_SNAPSHOT_MINUTES?.split(',')
    .map(Number)
    .filter((m) => m >= 0);
  const r = await faultSoak(minutes, seed, {
    faults: process.env.SOAK_FAULTS !== '0',
    ...(process.env.SOAK_HEAP_SNAPSHOTS ? { heapDir: process.env.SOAK_HEAP_SNAPSHOTS } : {}),
    ...(snapshotMinutes?.length ? { snapshotMinutes } : {}),
  });
  const { unexpectedErrors, ...figures } = r;
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(22)} ${typeof v === 'object' ? JSON.stringify(v) : v}`);
  if (unexpectedErrors.length) console.log(`unexpected errors:\n  ${unexpectedErrors.join('\n  ')}`);
  process.exit(r.lost === 0 && r.duplicated === 0 && r.agentExitCode === 0 ? 0 : 1);
}
