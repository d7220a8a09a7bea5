// Soak: the agent as a child process (`node bin/swan-provider.js run`) under mixed traffic for N
// minutes, with the dev hub dropping the link every 30 s. The dev hub and the test engines run in this
// process. Reported: the agent's RSS and open file descriptors (sockets included) at the start and end,
// requests served / failed / lost / doubled, link drops and re-registrations.
// Run: npx tsx bench/soak.ts [minutes]   (default 10)
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startDevHub, type DevHub } from '../src/cli/dev-hub';
import { startTestEngine, type TestEngine } from '../test/support/engine-server';
import { generatedText } from '../test/support/traces';
import { mulberry32 } from '../test/support/rng';
import { procStatus, streamedText, waitFor } from './proc';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'sk-prov-soak-0000000000';
const MODEL = 'soak/steady';
const FLAKY = 'soak/flaky';
const DROP_EVERY_MS = 30_000;
const SAMPLE_EVERY_MS = 10_000;
const WORKERS = 6;

export interface SoakSample {
  atS: number;
  rssMb: number;
  fds: number;
  activeRequests: number;
}

export interface SoakReport {
  minutes: number;
  /** At registration, before any traffic. */
  rssStartMb: number;
  /** First sample under traffic (after 10 s): the baseline for "flat". */
  rssWarmMb: number;
  rssEndMb: number;
  rssPeakMb: number;
  fdsStart: number;
  fdsEnd: number;
  requests: number;
  served: number;
  /** Ended with a clear error that the traffic mix asks for (flaky engine, unknown model, capacity). */
  failedExpected: number;
  /** Ended with an error that should not happen (e.g. an answer cut by a link drop). */
  failedUnexpected: number;
  /** Client-side aborts (cancel mid-stream). */
  cancelled: number;
  /** Answers whose text was wrong: chunks lost or doubled. */
  corrupted: number;
  linkDrops: number;
  registers: number;
  /** Messages the dev hub dropped as already seen (resume replays it had): informational. */
  hubDeduplicated: number;
  samples: SoakSample[];
  agentExitCode: number | null;
  unexpectedErrors: string[];
}

function writeHome(hub: DevHub, steady: TestEngine, flaky: TestEngine): string {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-soak-'));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [MODEL]: { endpoint: steady.url }, [FLAKY]: { endpoint: flaky.url } }, null, 2));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      'NodeName = "soak"',
      '[Inference]',
      `WebSocketURL = "${hub.wsUrl}"`,
      `ApiKey = "${KEY}"`,
      '[Agent]',
      'HeartbeatIntervalSeconds = 2',
      'PingIntervalSeconds = 2',
      'ReadTimeoutSeconds = 10',
      'HealthCheckIntervalSeconds = 2',
      'ReconnectMaxBackoffSeconds = 1',
      'ResumeGraceSeconds = 1',
      'GpuSampleIntervalSeconds = 5',
      'MaxConcurrentPerEndpoint = 4',
      'MaxQueuePerModel = 8',
      'Discovery = false',
      '',
    ].join('\n'),
  );
  return home;
}

type Outcome = 'served' | 'failedExpected' | 'failedUnexpected' | 'cancelled' | 'corrupted';

/** One request of the mix; resolves with how it ended (never rejects). */
async function oneRequest(hub: DevHub, rand: () => number, errors: string[]): Promise<Outcome> {
  const roll = rand();
  const n = 10 + Math.floor(rand() * 150);
  const post = (p: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> =>
    fetch(`${hub.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  const note = (what: string): Outcome => {
    if (errors.length < 20) errors.push(what);
    return 'failedUnexpected';
  };
  try {
    if (roll < 0.55) {
      // Streamed chat: the text must be exactly the generated tokens.
      const res = await post('/v1/chat/completions', { model: MODEL, stream: true, max_tokens: n, messages: [{ role: 'user', content: 'soak' }] });
      if (res.status === 429) return 'failedExpected';
      const text = await res.text();
      const { content, error } = streamedText(text);
      if (res.status !== 200) return res.status === 429 ? 'failedExpected' : note(`stream HTTP ${res.status}: ${text.slice(0, 120)}`);
      if (error) return note(`stream error: ${error}`);
      return content === generatedText(n) ? 'served' : 'corrupted';
    }
    if (roll < 0.7) {
      const res = await post('/v1/chat/completions', { model: MODEL, max_tokens: n, messages: [{ role: 'user', content: 'soak' }] });
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: string } }>; error?: { message?: string } };
      if (res.status === 429) return 'failedExpected';
      if (res.status !== 200) return note(`non-stream HTTP ${res.status}: ${body.error?.message ?? ''}`);
      return body.choices?.[0]?.message?.content === generatedText(n) ? 'served' : 'corrupted';
    }
    if (roll < 0.8) {
      // The client goes away mid-stream: the hub cancels, the engine request must be freed.
      const ctl = new AbortController();
      const res = await post(
        '/v1/chat/completions',
        { model: MODEL, stream: true, max_tokens: 400, messages: [{ role: 'user', content: 'soak' }] },
        ctl.signal,
      );
      if (res.status !== 200) {
        await res.body?.cancel();
        return res.status === 429 ? 'failedExpected' : note(`cancel-case HTTP ${res.status}`);
      }
      const reader = res.body!.getReader();
      await reader.read();
      ctl.abort();
      await reader.cancel().catch(() => undefined);
      return 'cancelled';
    }
    if (roll < 0.92) {
      // The flaky engine drops mid-stream: a clear 502 error is the right answer.
      const res = await post('/v1/chat/completions', { model: FLAKY, stream: true, max_tokens: 200, messages: [{ role: 'user', content: 'soak' }] });
      const text = await res.text();
      return /"error"/.test(text) || res.status >= 400 ? 'failedExpected' : note(`flaky engine answer without error: ${text.slice(0, 80)}`);
    }
    const res = await post('/v1/chat/completions', { model: 'soak/nobody', stream: true, messages: [{ role: 'user', content: 'soak' }] });
    await res.text();
    return res.status === 404 ? 'failedExpected' : note(`unknown model HTTP ${res.status}`);
  } catch (e) {
    return note(`client error: ${(e as Error).message}`);
  }
}

export async function soak(minutes = 10): Promise<SoakReport> {
  const hub = await startDevHub({ token: KEY, reattachMs: 30_000 });
  const steady = await startTestEngine({ models: [MODEL], mode: { generate: 100_000, delayMs: 2 } });
  const flaky = await startTestEngine({ models: [FLAKY], mode: { generate: 200, delayMs: 1, dropAfterEvents: 40 } });
  const home = writeHome(hub, steady, flaky);
  let agent: ChildProcess | undefined;
  const stderr: string[] = [];
  try {
    agent = spawn(
      process.execPath,
      [path.join(repo, 'bin', 'swan-provider.js'), 'run', '--config', path.join(home, 'config.toml'), '--home', home, '--no-discovery', '--quiet'],
      {
        cwd: repo,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: process.env.PATH ?? '', HOME: home },
      },
    );
    agent.stderr!.on('data', (d: Buffer) => {
      stderr.push(d.toString());
      if (stderr.length > 200) stderr.shift();
    });
    const pid = agent.pid!;
    const exited = new Promise<number | null>((resolve) => agent!.once('exit', (code) => resolve(code)));
    await waitFor(() => hub.providers().some((p) => p.connected && p.models.includes(MODEL) && p.models.includes(FLAKY)), 'the agent to register', 60_000);
    const t0 = Date.now();
    const start = procStatus(pid);
    const report: SoakReport = {
      minutes,
      rssStartMb: start.rssMb,
      rssWarmMb: 0,
      rssEndMb: 0,
      rssPeakMb: start.rssMb,
      fdsStart: start.fds,
      fdsEnd: 0,
      requests: 0,
      served: 0,
      failedExpected: 0,
      failedUnexpected: 0,
      cancelled: 0,
      corrupted: 0,
      linkDrops: 0,
      registers: 0,
      hubDeduplicated: 0,
      samples: [],
      agentExitCode: null,
      unexpectedErrors: [],
    };
    let activeRequests = 0;
    hub.events.on('heartbeat', (_p: unknown, payload: { metrics?: { active_requests?: number } }) => {
      activeRequests = Number(payload.metrics?.active_requests ?? 0);
    });
    const sample = (): void => {
      const s = procStatus(pid);
      report.rssPeakMb = Math.max(report.rssPeakMb, s.rssMb);
      report.samples.push({ atS: Math.round((Date.now() - t0) / 1000), ...s, activeRequests });
      console.error(
        `soak ${report.samples.at(-1)!.atS}s: agent RSS ${s.rssMb} MB, ${s.fds} fds, ${report.requests} requests (${report.served} served), ${report.linkDrops} link drops`,
      );
    };
    const endAt = t0 + minutes * 60_000;
    const drops = setInterval(() => {
      report.linkDrops++;
      hub.dropProviders();
    }, DROP_EVERY_MS);
    const sampler = setInterval(sample, SAMPLE_EVERY_MS);
    const rand = mulberry32(0x50a4);
    const worker = async (): Promise<void> => {
      while (Date.now() < endAt) {
        // Wait out a link drop: the dev hub answers 404 while no provider is connected.
        if (!hub.providers().some((p) => p.connected)) {
          await new Promise((r) => setTimeout(r, 50));
          continue;
        }
        const outcome = await oneRequest(hub, rand, report.unexpectedErrors);
        report.requests++;
        report[outcome]++;
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, () => worker()));
    clearInterval(drops);
    clearInterval(sampler);
    // Let the agent settle: reconnected, idle, finished answers swept (they linger 30 s after the end).
    await waitFor(() => hub.providers().some((p) => p.connected), 'the agent to be connected', 30_000);
    await waitFor(() => activeRequests === 0, 'the agent to be idle', 60_000);
    await new Promise((r) => setTimeout(r, 40_000));
    sample();
    const end = procStatus(pid);
    report.rssEndMb = end.rssMb;
    report.fdsEnd = end.fds;
    report.registers = hub.providers()[0]?.registers ?? 0;
    report.hubDeduplicated = hub.behaviour.duplicates;
    report.rssWarmMb = report.samples[0]?.rssMb ?? start.rssMb;
    agent.kill('SIGTERM');
    report.agentExitCode = await exited;
    return report;
  } finally {
    if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
    await hub.close();
    await steady.close();
    await flaky.close();
    fs.rmSync(home, { recursive: true, force: true });
    if (stderr.some((l) => /ERROR/.test(l))) console.error(`agent stderr (last lines):\n${stderr.join('').split('\n').slice(-20).join('\n')}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const minutes = process.argv[2] ? Number(process.argv[2]) : 10;
  if (!(minutes > 0)) {
    console.error('usage: npx tsx bench/soak.ts [minutes]   (a positive number; default 10)');
    process.exit(2);
  }
  const r = await soak(minutes);
  const { samples, unexpectedErrors, ...figures } = r;
  for (const [k, v] of Object.entries(figures)) console.log(`${k.padEnd(18)} ${v}`);
  console.log(`rssSamplesMb       ${samples.map((s) => s.rssMb).join(' ')}`);
  console.log(`fdSamples          ${samples.map((s) => s.fds).join(' ')}`);
  if (unexpectedErrors.length) console.log(`unexpected errors:\n  ${unexpectedErrors.join('\n  ')}`);
}
