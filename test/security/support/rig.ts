// The attack suite's target: the real CLI (`swan-provider run`, a child process) with its console and
// local gateway on, connected to a hostile hub stand-in and serving from a hostile engine stand-in, on a
// fresh home. After each attack the suite checks what the owner needs: the process is up, the hub link is
// registered and serves an ordinary request, the console answers (within 1 s), and no secret left.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { GatewayKeys } from '../../../src/core/gateway/keys';
import { writeConfigToml } from '../../support/config-toml';
import { freePort, tempHome, until } from '../../support/stack';
import { repoRoot } from '../../support/traces';
import { HostileEngine, ALL_MODELS, SAFE_MODEL } from './hostile-engine';
import { HostileHub } from './hostile-hub';
import { HostilePlatform } from './hostile-platform';

const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');
export const PROVIDER_KEY = 'sk-prov-attack-suite-0123456789';
/** The agent's limit on open files in the suite. */
export const FILE_LIMIT = 1024;

export interface Rig {
  hub: HostileHub;
  engine: HostileEngine;
  /** The platform's HTTP API (the ServiceURL), hostile in every answer. */
  platform: HostilePlatform;
  home: string;
  consolePort: number;
  gatewayPort: number;
  /** The console token (from its token file). */
  token: string;
  /** A gateway key made before the agent started (as `swan-provider keys create` does). */
  gatewayKey: string;
  agent: ChildProcess;
  /** Everything the agent printed. */
  output(): string;
  close(): Promise<void>;
}

let nextId = 1;

export async function startRig(): Promise<Rig> {
  const hub = await HostileHub.start();
  const engine = await HostileEngine.start();
  const platform = await HostilePlatform.start();
  const home = tempHome('swan-attack-');
  const consolePort = await freePort();
  const gatewayPort = await freePort();
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(Object.fromEntries(ALL_MODELS.map((m) => [m, { endpoint: `${engine.url}/v1` }]))));
  writeConfigToml(home, {
    API: { NodeName: 'attack-suite' },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: platform.url, ApiKey: PROVIDER_KEY },
    // No deep checks: a hostile model fails its 1-token probe and is then (rightly) not routed at all, while
    // these suites send each hostile answer through the relay to show it is refused there.
    Agent: { Discovery: false, HeartbeatIntervalSeconds: 1, HealthCheckIntervalSeconds: 1, DeepHealthCheckEvery: 0 },
    Gateway: { Enable: true, Listen: `127.0.0.1:${gatewayPort}` },
  });
  const gatewayKey = new GatewayKeys(home).create('attack-suite').key;
  const tokenFile = path.join(home, 'console-token');
  const env: NodeJS.ProcessEnv = { ...process.env, SWAN_HOME: home };
  delete env.INFERENCE_API_KEY;
  const args = [BIN, 'run', '--home', home, '--no-discovery', '--console', `127.0.0.1:${consolePort}`, '--console-token-file', tokenFile];
  // A file limit of 1,024 (a common default): a flood of a few thousand connections is then enough to run a
  // process out of descriptors, as 20,000 did at the limit of the machine where the attack was found.
  const agent =
    process.platform === 'win32'
      ? spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn('/bin/sh', ['-c', `ulimit -n ${FILE_LIMIT} && exec "$0" "$@"`, process.execPath, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  agent.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  agent.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => agent.once('exit', () => resolve()));
  const rig: Rig = {
    hub,
    engine,
    platform,
    home,
    consolePort,
    gatewayPort,
    token: '',
    gatewayKey,
    agent,
    output: () => out,
    close: async () => {
      if (agent.exitCode === null) agent.kill('SIGTERM');
      const killer = setTimeout(() => agent.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
      await hub.close();
      await engine.close();
      await platform.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
  try {
    await until(() => /console: http/.test(out) && /local gateway listening/.test(out) && hub.connected, 'the agent started and registered', 40_000);
    rig.token = fs.readFileSync(tokenFile, 'utf8').trim();
  } catch (e) {
    await rig.close();
    throw new Error(`${(e as Error).message}\n${out}`);
  }
  return rig;
}

/** The agent's JSON log lines so far (<home>/logs/agent.jsonl). */
export function logLines(rig: Rig): Array<{ msg: string; code?: string; level?: number }> {
  let text = '';
  try {
    text = fs.readFileSync(path.join(rig.home, 'logs', 'agent.jsonl'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { msg: string; code?: string; level?: number });
}

/** Resolves once the agent logged a line with this code (and, when given, matching `re`). */
export async function logged(rig: Rig, code: string, re?: RegExp): Promise<void> {
  await until(() => logLines(rig).some((l) => l.code === code && (!re || re.test(l.msg))), `a log line with code ${code}`, 10_000);
}

/** The console's answer to the owner's program (the token as Bearer), and how long it took. */
export async function consoleAnswer(rig: Rig): Promise<{ status: number; ms: number }> {
  // The fastest of up to three asks: one sample also times this test process and the other suites sharing the
  // machine's two cores; a console the attack blocks answers none of the three in time.
  let best = { status: 0, ms: Infinity };
  for (let i = 0; i < 3 && best.ms >= 1000; i++) {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${rig.consolePort}/session`, {
      headers: { authorization: `Bearer ${rig.token}` },
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    const ms = performance.now() - t0;
    if (ms < best.ms) best = { status: res.status, ms };
  }
  return best;
}

/**
 * What must hold after every attack: the agent process is up, its hub link is registered and an ordinary
 * hub request completes, the console answers within 1 s, and no secret went where it must not.
 */
export async function expectUnharmed(rig: Rig, after: string): Promise<void> {
  expect(rig.agent.exitCode, `the agent exited after ${after}:\n${rig.output().slice(-4000)}`).toBeNull();
  await rig.hub.registered(15_000);
  const id = `health-${nextId++}`;
  const from = rig.hub.frames.length;
  const { end } = await rig.hub.inference(id, SAFE_MODEL, false).catch((e: Error) => {
    // What the hub heard since, and the agent's last words: enough to tell a lost answer from a dropped link.
    const heard = rig.hub.frames
      .slice(from)
      .map((f) => `${f.type}:${f.request_id ?? ''}`)
      .join(' ');
    throw new Error(`${e.message} after ${after}\nthe hub heard: ${heard}\n${rig.output().slice(-3000)}`);
  });
  expect(end.payload?.status_code ?? 200, `an ordinary hub request after ${after}`).toBe(200);
  const c = await consoleAnswer(rig);
  expect(c.status, `the console after ${after}`).toBe(204);
  expect(c.ms, `the console's answer time after ${after}`).toBeLessThan(1000);
  expectNoSecretLeft(rig);
  expect(rig.agent.exitCode, `the agent exited after ${after}`).toBeNull();
}

/** The engine never saw the provider key, the console token or a gateway key; the hub never saw the latter two. */
export function expectNoSecretLeft(rig: Rig): void {
  for (const secret of [PROVIDER_KEY, rig.token, rig.gatewayKey]) {
    expect(
      rig.engine.seen.some((s) => s.includes(secret)),
      'a secret reached the engine',
    ).toBe(false);
  }
  for (const secret of [rig.token, rig.gatewayKey])
    expect(
      rig.hub.texts.some((s) => s.includes(secret)),
      'a secret reached the hub',
    ).toBe(false);
}
