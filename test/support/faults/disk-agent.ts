// What the disk fault suites share: the agent's CLI run as a child in a home on the disk under test, a
// home configured to serve one model from a test engine through a recording hub, and that engine and hub
// started once per suite.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { RecordingHub } from '../recording-hub';
import { startTestEngine, type TestEngine } from '../engine-server';
import { TEST_KEY } from '../stack';
import { writeConfigToml } from '../config-toml';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(root, 'bin', 'swan-provider.js');

export interface AgentChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr as they came. */
  output: () => string;
  stderr: () => string;
}

const children: ChildProcess[] = [];

/** Kills every agent still running: one that failed to stop (the hang these suites are about) is not left behind. Call it before unmounting. */
export function killAgents(): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** `swan-provider run` in `home` (discovery off), without the key or hub this process's environment may name. */
export function startAgent(home: string): AgentChild {
  const env = { ...process.env };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  const child = spawn(process.execPath, [CLI, 'run', '--config', path.join(home, 'config.toml'), '--home', home, '--no-discovery'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => out, stderr: () => err };
}

export interface ServingRig {
  engine: TestEngine;
  hub: RecordingHub;
  /** Writes `home`'s models.json (the model on the engine) and config.toml (the hub, a key, fast health checks). */
  configure(home: string): string;
}

/** A test engine serving `model` and a recording hub, started before the suite's tests and closed after them. */
export function servingRig(model: string): ServingRig {
  const rig = { model } as ServingRig & { model: string };
  rig.configure = (home) => {
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint: rig.engine.url } }));
    return writeConfigToml(home, {
      Inference: { Enable: true, WebSocketURL: rig.hub.wsUrl, ServiceURL: 'http://127.0.0.1:9', ApiKey: TEST_KEY },
      Agent: { Discovery: false, HealthCheckIntervalSeconds: 0.2 },
    });
  };
  beforeAll(async () => {
    rig.engine = await startTestEngine({ models: [model], mode: { generate: 50, delayMs: 2 }, promptTokens: 9 });
    rig.hub = await RecordingHub.start();
  });
  afterAll(async () => {
    await rig.hub?.close();
    await rig.engine?.close();
  });
  return rig;
}
