// The bench rig: the bench engine and the minimal forwarder as child processes, the dev hub in this
// process (it is the harness that times what arrives), and the agent as a child process started the
// way users start it: `node bin/swan-provider.js run --config <cfg> --home <home> --no-discovery`.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startDevHub, type DevHub } from '../src/cli/dev-hub';
import { AGENT_NAME, BENCH_KEY, writeAgentHome } from './agent-home';
import type { StepPhase } from './bench-engine';
import { startChild, type Child } from './child';
import { measureClockOffset, type ClockOffset } from './clock';
import { DirectClient } from './direct-client';
import { HubDriver } from './hub-driver';

export const FORWARDER_NAME = 'bench-forwarder';

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

export async function startAgentChild(hub: DevHub, home: string, cpuProfDir?: string): Promise<Child> {
  const args = [
    ...(cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []),
    'bin/swan-provider.js',
    'run',
    '--config',
    path.join(home, 'config.toml'),
    '--home',
    home,
    '--no-discovery',
  ];
  const agent = await startChild({ name: 'agent', args, ready: /agent running/, env: childEnv() });
  await waitForProvider(hub, AGENT_NAME);
  return agent;
}

export async function startRig(): Promise<Rig> {
  const engine = await startChild({ name: 'bench engine', args: ['--import', 'tsx', 'bench/bench-engine.ts'], ready: /listening on http:\/\/\S+/ });
  const engineUrl = /(http:\/\/\S+)/.exec(engine.readyLine)?.[1] as string;
  const hub = await startDevHub({ port: 0, token: BENCH_KEY });
  const home = writeAgentHome(hub.wsUrl, hub.url, engineUrl);
  const forwarder = await startChild({
    name: 'minimal forwarder',
    args: ['--import', 'tsx', 'bench/minimal-forwarder.ts', hub.wsUrl, BENCH_KEY, engineUrl],
    ready: /forwarder registered/,
    env: childEnv(),
  });
  const offset = await measureClockOffset(engineUrl);
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
      const res = await fetch(`${engineUrl}/_bench/config`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stepMs: ms, phase }) });
      if (!res.ok) throw new Error(`the bench engine refused step ${ms} ms: ${res.status} ${await res.text()}`);
    },
    restartAgent: async (cpuProfDir) => {
      await rig.agent.stop();
      await waitForDisconnect(hub, AGENT_NAME);
      rig.agent = await startAgentChild(hub, home, cpuProfDir);
    },
    close: async () => {
      rig.driver.close();
      rig.direct.close();
      await Promise.all([rig.agent.stop(), forwarder.stop(), engine.stop()]);
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
