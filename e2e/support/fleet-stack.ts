// Three rigs against one dev hub, each as an owner runs one: `swan-provider run` as its own process with
// its own home (so its own node id and ledger), its own console port (token kept in a file, as `service
// install` does), /metrics on, and its own simulated engine serving a model only it has (so traffic for
// that model reaches that rig). Tokens for reading the rigs are made with the CLI, as the owner would.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startSimulatedEngine, type SimulatedEngine } from '../../src/cli/sim-engine';
import { CONSOLE_LINE, PROVIDER_KEY, Proc, repoRoot, startCli } from './stack';

const run = promisify(execFile);
const CLI = path.join(repoRoot, 'bin', 'swan-provider.js');
const FAKE_GPU_DIR = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');

export interface RigSpec {
  name: string;
  /** The simulated engine's speed: tokens per second. */
  tokensPerSecond: number;
}

export interface FleetRig {
  name: string;
  model: string;
  home: string;
  port: number;
  /** The console token (from the rig's token file). */
  token: string;
  engine: SimulatedEngine;
  proc: Proc;
  consoleUrl: string;
  /** A bookmark of the console: `/?token=…` (exchanged for a session cookie by the console). */
  bookmark: string;
}

export type Served = { requests: number; tokensIn: number; tokensOut: number };

function cleanEnv(root: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CP_PATH: path.join(root, 'no-go-provider'),
    PATH: `${FAKE_GPU_DIR}${path.delimiter}${process.env.PATH ?? ''}`,
  };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  return env;
}

export class FleetStack {
  private constructor(
    readonly root: string,
    readonly hubUrl: string,
    private readonly hub: Proc,
    readonly rigs: FleetRig[],
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  static async start(specs: RigSpec[]): Promise<FleetStack> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-fleet-e2e-'));
    const env = cleanEnv(root);
    const hub = startCli('dev hub', ['dev-hub', '--port', '0', '--token', PROVIDER_KEY, '--home', path.join(root, 'hub')], env);
    const rigs: FleetRig[] = [];
    try {
      const [, hubUrl] = await hub.waitForLine(/dev hub listening on (http:\/\/127\.0\.0\.1:\d+)/);
      const wsUrl = hubUrl!.replace(/^http/, 'ws');
      // Started one after the other: three agents building at once on a shared two-core machine is slow for nothing.
      for (const spec of specs) rigs.push(await FleetStack.startRig(root, spec, wsUrl, hubUrl!, env));
      return new FleetStack(root, hubUrl!, hub, rigs, env);
    } catch (e) {
      for (const r of rigs) {
        await r.proc.stop();
        await r.engine.close();
      }
      await hub.stop();
      fs.rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  private static async startRig(root: string, spec: RigSpec, wsUrl: string, hubUrl: string, env: NodeJS.ProcessEnv): Promise<FleetRig> {
    const home = path.join(root, spec.name);
    fs.mkdirSync(home, { recursive: true });
    const model = `simulated-${spec.name}-7b`;
    const engine = await startSimulatedEngine({ host: '127.0.0.1', models: [model], tokensPerSecond: spec.tokensPerSecond, firstTokenMs: 20 });
    const config = path.join(home, 'config.toml');
    fs.writeFileSync(
      config,
      [
        '[API]',
        `NodeName = "${spec.name}"`,
        '[Inference]',
        'Enable = true',
        `WebSocketURL = "${wsUrl}"`,
        `ServiceURL = "${hubUrl}"`,
        `ApiKey = "${PROVIDER_KEY}"`,
        '[Agent]',
        'Discovery = false',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint: engine.url } }, null, 2));
    const tokenFile = path.join(home, 'console-token');
    const proc = startCli(
      spec.name,
      ['run', '--config', config, '--home', home, '--no-discovery', '--console', '127.0.0.1:0', '--console-token-file', tokenFile, '--metrics'],
      env,
    );
    try {
      // Printed once the agent has started (run.ts).
      const [, consoleUrl] = await proc.waitForLine(CONSOLE_LINE, 60_000);
      const port = Number(new URL(consoleUrl!).port);
      const token = fs.readFileSync(tokenFile, 'utf8').trim();
      return { name: spec.name, model, home, port, token, engine, proc, consoleUrl: consoleUrl!, bookmark: `http://127.0.0.1:${port}/?token=${token}` };
    } catch (e) {
      await proc.stop();
      await engine.close();
      throw e;
    }
  }

  rig(name: string): FleetRig {
    const r = this.rigs.find((x) => x.name === name);
    if (!r) throw new Error(`no rig ${name}`);
    return r;
  }

  /** Runs the CLI as the owner would; resolves with its output and exit code. */
  async cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    try {
      const r = await run(process.execPath, [CLI, ...args], { cwd: repoRoot, env: this.env, maxBuffer: 4 * 1024 * 1024 });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (e) {
      const err = e as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof err.code === 'number' ? err.code : 1, stdout: err.stdout ?? '', stderr: err.stderr ?? '' };
    }
  }

  /** `swan-provider fleet token create` on a rig: the read-only token another console reads it with. */
  async fleetToken(rig: FleetRig, name: string): Promise<string> {
    const r = await this.cli(['fleet', 'token', 'create', '--name', name, '--home', rig.home]);
    if (r.code !== 0) throw new Error(`fleet token create failed (${r.code}): ${r.stderr}`);
    return r.stdout.trim();
  }

  /** Waits until the dev hub has every rig registered with its model. */
  async registered(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await fetch(`${this.hubUrl}/dev/providers`);
      const list = (await res.json()) as Array<{ nodeName: string; connected: boolean; models: string[] }>;
      if (this.rigs.every((r) => list.some((p) => p.nodeName === r.name && p.connected && p.models.includes(r.model)))) return;
      if (Date.now() > deadline) throw new Error(`not every rig registered with the dev hub: ${JSON.stringify(list)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** One streamed chat completion through the hub, as a network user sends it; the engine's usage as reported. */
  async chat(model: string, maxTokens: number): Promise<{ tokensIn: number; tokensOut: number }> {
    const res = await fetch(`${this.hubUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: 'Tell me about GPUs.' }],
      }),
    });
    if (!res.ok) throw new Error(`hub chat: HTTP ${res.status} ${await res.text()}`);
    let usage: { prompt_tokens: number; completion_tokens: number } | undefined;
    for (const block of (await res.text()).split('\n\n')) {
      const data = block.replace(/^data: /, '').trim();
      if (!data || data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { usage?: { prompt_tokens: number; completion_tokens: number } | null };
      if (chunk.usage) usage = chunk.usage;
    }
    if (!usage) throw new Error('the stream carried no usage chunk');
    return { tokensIn: usage.prompt_tokens, tokensOut: usage.completion_tokens };
  }

  /** `n` requests to the rig's model, `parallel` at a time; resolves with what the engine reported for them. */
  async traffic(rig: FleetRig, n: number, maxTokens: number, parallel = 4): Promise<Served> {
    const served: Served = { requests: 0, tokensIn: 0, tokensOut: 0 };
    let next = 0;
    const worker = async () => {
      while (next < n) {
        next++;
        const u = await this.chat(rig.model, maxTokens);
        served.requests++;
        served.tokensIn += u.tokensIn;
        served.tokensOut += u.tokensOut;
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, n) }, worker));
    return served;
  }

  /** Kills a rig's agent outright (SIGKILL: no goodbye to anyone). */
  async kill(rig: FleetRig): Promise<void> {
    rig.proc.child.kill('SIGKILL');
    await new Promise<void>((resolve) =>
      rig.proc.child.exitCode !== null || rig.proc.child.signalCode !== null ? resolve() : rig.proc.child.once('exit', () => resolve()),
    );
  }

  logs(): string {
    return [`--- dev hub ---\n${this.hub.output.join('')}`, ...this.rigs.map((r) => `--- ${r.name} ---\n${r.proc.output.join('')}`)].join('\n');
  }

  async close(): Promise<void> {
    for (const r of this.rigs) {
      await r.proc.stop();
      await r.engine.close();
    }
    await this.hub.stop();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
