// The bench rig: the bench engine and the minimal forwarder as child processes, the dev hub in this
// process (it is the harness that times what arrives), and the agent as a child process started the
// way users start it: `node bin/swan-provider.js run --config <cfg> --home <home> --no-discovery`.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDevHub, type DevHub } from '../src/cli/dev-hub';
import { AGENT_NODE_FLAGS } from '../src/cli/service';
import { buildForwarderBundle } from './agent-bundle';
import { AGENT_NAME, BENCH_KEY, writeAgentHome } from './agent-home';
import type { StepPhase } from './bench-engine';
import { pathToFileURL } from 'node:url';
import { ROOT, startChild, type Child } from './child';
import { measureClockOffset, type ClockOffset } from './clock';
import { DirectClient } from './direct-client';
import { HubDriver } from './hub-driver';

export const FORWARDER_NAME = 'bench-forwarder';
export const METRICS_AGENT_NAME = 'bench-agent-metrics';
export const NO_LEDGER_NAME = 'bench-agent-noledger';
/** node options that preload the loop probe (bench/loop-probe.mjs) into a measured relay process. */
export const PROBE_ARGS = ['--import', pathToFileURL(path.join(ROOT, 'bench', 'loop-probe.mjs')).href];

export interface Rig {
  engine: Child;
  engineUrl: string;
  hub: DevHub;
  agent: Child;
  forwarder: Child;
  home: string;
  offset: ClockOffset;
  direct: DirectClient;
  driver: HubDriver;
  /** Engine decode step in ms (0 = full speed); batched (all streams step together) unless staggered. */
  setStep(ms: number, phase?: StepPhase): Promise<void>;
  /** Starts another agent on the same home (after stopping the current one), optionally under --cpu-prof. */
  restartAgent(cpuProfDir?: string): Promise<void>;
  /** The same for the minimal forwarder. */
  restartForwarder(cpuProfDir?: string): Promise<void>;
  /**
   * Diagnostic: a second agent (NO_LEDGER_NAME) whose ledger cannot open (ledger.sqlite is a directory),
   * so it keeps usage in memory, its own fallback. Stopped by the returned function or by close().
   */
  startNoLedgerAgent(): Promise<() => Promise<void>>;
  /** A/B: a second agent (AGENT_B_NAME) run from another build of the CLI (bench/ab.ts), on its own home. */
  startAgentB(entry: string): Promise<() => Promise<void>>;
  /**
   * A second agent (METRICS_AGENT_NAME) of the same build with the console and /metrics on
   * (`run --console 127.0.0.1:0 --metrics`): resolves with its /metrics address and console token.
   */
  startMetricsAgent(): Promise<{ metricsUrl: string; token: string; pid: number; stop: () => Promise<void> }>;
  /** The relay processes by path name (for the loop probe). */
  processOf(path: 'agent' | 'forwarder' | 'agentNoLedger' | 'agentB'): Child | undefined;
  close(): Promise<void>;
}

/** The environment for children: no INFERENCE_* overrides from the user's shell. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  return env;
}

async function waitForProvider(hub: DevHub, name: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!hub.providers().some((p) => p.nodeName === name && p.connected)) {
    if (Date.now() > deadline) throw new Error(`${name} did not register with the dev hub within ${timeoutMs} ms`);
    await sleep(20);
  }
}

export const AGENT_B_NAME = 'bench-agent-b';

/** `entry`: the script that runs the CLI (bin/swan-provider.js, or an A/B launcher from bench/ab.ts). */
export async function startAgentChild(
  hub: DevHub,
  home: string,
  cpuProfDir?: string,
  name = AGENT_NAME,
  entry = 'bin/swan-provider.js',
  extraArgs: string[] = [],
): Promise<Child> {
  const args = [
    ...PROBE_ARGS,
    ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []),
    // Started as `service install`'s unit starts it.
    ...AGENT_NODE_FLAGS,
    entry,
    'run',
    '--config',
    path.join(home, 'config.toml'),
    '--home',
    home,
    '--no-discovery',
    ...extraArgs,
  ];
  const agent = await startChild({ name, args, ready: /agent running/, env: childEnv() });
  try {
    await waitForProvider(hub, name);
  } catch (e) {
    await agent.stop();
    throw new Error(`${(e as Error).message}. The agent's output:\n${agent.tail()}`);
  }
  return agent;
}

/** `file`: the forwarder's bundle (buildForwarderBundle), run like the agent's: plain node, no loader. */
export function startForwarderChild(hub: DevHub, engineUrl: string, file: string, cpuProfDir?: string): Promise<Child> {
  return startChild({
    name: 'minimal forwarder',
    args: [...PROBE_ARGS, ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), file, hub.wsUrl, BENCH_KEY, engineUrl],
    ready: /forwarder registered/,
    env: childEnv(),
  });
}

export interface RigOptions {
  /** The dev hub offers resume-v1 (default), or speaks the real hub's dialect without it. */
  hubResume?: boolean;
}

export async function startRig(o: RigOptions = {}): Promise<Rig> {
  // What started so far, stopped again if a later part fails to start.
  const started: Array<() => Promise<unknown>> = [];
  try {
    return await assemble(started, o);
  } catch (e) {
    for (const undo of started.reverse()) await undo().catch(() => undefined);
    throw e;
  }
}

async function assemble(started: Array<() => Promise<unknown>>, o: RigOptions): Promise<Rig> {
  // The agent runs as users run it, bin/swan-provider.js, which runs out/cli/main.mjs only while it is newer
  // than the sources (else tsx): built here, so a stale bundle cannot put the agent under tsx (a failed build
  // says so in the bench's output: scripts/build-cli.mjs warns and the agent then runs through tsx).
  await import(pathToFileURL(path.join(ROOT, 'scripts', 'build-cli.mjs')).href);
  const engine = await startChild({ name: 'bench engine', args: ['--import', 'tsx', 'bench/bench-engine.ts'], ready: /listening on http:\/\/\S+/ });
  started.push(() => engine.stop());
  const engineUrl = /(http:\/\/\S+)/.exec(engine.readyLine)?.[1] as string;
  const hub = await startDevHub({ port: 0, token: BENCH_KEY, resume: o.hubResume !== false });
  started.push(() => hub.close());
  const home = writeAgentHome(hub.wsUrl, hub.url, engineUrl);
  started.push(async () => fs.rmSync(home, { recursive: true, force: true }));
  const forwarderFile = await buildForwarderBundle();
  const forwarder = await startForwarderChild(hub, engineUrl, forwarderFile);
  started.push(() => forwarder.stop());
  const offset = await measureClockOffset(engineUrl);
  const extra = new Set<{ child: Child; home: string }>();
  const stopExtra = async (e: { child: Child; home: string }): Promise<void> => {
    extra.delete(e);
    await e.child.stop();
    fs.rmSync(e.home, { recursive: true, force: true });
  };
  const rig: Rig = {
    engine,
    engineUrl,
    hub,
    agent: await startAgentChild(hub, home),
    forwarder,
    home,
    offset,
    direct: new DirectClient(engineUrl, offset.offsetMs),
    driver: new HubDriver(hub, offset.offsetMs),
    setStep: async (ms, phase = 'batched') => {
      const res = await fetch(`${engineUrl}/_bench/config`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ stepMs: ms, phase }),
      });
      if (!res.ok) throw new Error(`the bench engine refused step ${ms} ms: ${res.status} ${await res.text()}`);
    },
    restartAgent: async (cpuProfDir) => {
      await rig.agent.stop();
      await waitForDisconnect(hub, AGENT_NAME);
      rig.agent = await startAgentChild(hub, home, cpuProfDir);
    },
    restartForwarder: async (cpuProfDir) => {
      await rig.forwarder.stop();
      await waitForDisconnect(hub, FORWARDER_NAME);
      rig.forwarder = await startForwarderChild(hub, engineUrl, forwarderFile, cpuProfDir);
    },
    startNoLedgerAgent: async () => {
      const h = writeAgentHome(hub.wsUrl, hub.url, engineUrl, NO_LEDGER_NAME);
      fs.mkdirSync(path.join(h, 'ledger.sqlite'));
      const e = { child: await startAgentChild(hub, h, undefined, NO_LEDGER_NAME), home: h };
      extra.add(e);
      return () => stopExtra(e);
    },
    startAgentB: async (entry) => {
      const h = writeAgentHome(hub.wsUrl, hub.url, engineUrl, AGENT_B_NAME);
      const e = { child: await startAgentChild(hub, h, undefined, AGENT_B_NAME, entry), home: h };
      extra.add(e);
      return () => stopExtra(e);
    },
    startMetricsAgent: async () => {
      const h = writeAgentHome(hub.wsUrl, hub.url, engineUrl, METRICS_AGENT_NAME);
      const tokenFile = path.join(h, 'console-token');
      const child = await startAgentChild(hub, h, undefined, METRICS_AGENT_NAME, 'bin/swan-provider.js', [
        '--console',
        '127.0.0.1:0',
        '--console-token-file',
        tokenFile,
        '--metrics',
      ]);
      const e = { child, home: h };
      extra.add(e);
      const port = /console listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(child.tail())?.[1];
      if (!port) {
        await stopExtra(e);
        throw new Error(`the metrics agent printed no console address:\n${child.tail()}`);
      }
      return { metricsUrl: `http://127.0.0.1:${port}/metrics`, token: fs.readFileSync(tokenFile, 'utf8').trim(), pid: child.pid, stop: () => stopExtra(e) };
    },
    processOf: (p) => {
      if (p === 'agent') return rig.agent;
      if (p === 'forwarder') return rig.forwarder;
      const name = p === 'agentB' ? AGENT_B_NAME : NO_LEDGER_NAME;
      return [...extra].find((e) => e.child.name === name)?.child;
    },
    close: async () => {
      rig.driver.close();
      rig.direct.close();
      for (const e of [...extra]) await stopExtra(e);
      await Promise.all([rig.agent.stop(), rig.forwarder.stop(), engine.stop()]);
      await hub.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
  return rig;
}

async function waitForDisconnect(hub: DevHub, name: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (hub.providers().some((p) => p.nodeName === name && p.connected)) {
    if (Date.now() > deadline) throw new Error(`${name} still connected ${timeoutMs} ms after it was stopped`);
    await sleep(20);
  }
}
