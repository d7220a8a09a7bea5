// One real stack per test: the dev hub and the agent as child processes of the `swan-provider` CLI, a
// simulated OpenAI-compatible engine, a fresh home folder, and (optionally) a stand-in nvidia-smi on
// PATH so the agent's real GPU detection and sampler feed the charts. Readiness is read from the lines
// the processes print; nothing sleeps.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { startSimulatedEngine, type SimulatedEngine } from '../../src/cli/sim-engine';
import { Ledger } from '../../src/core/ledger/ledger';
import { PlatformApi } from '../../test/support/platform-api';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PROVIDER_KEY = 'sk-prov-e2e-0123456789';
/** A key the dev hub's status API reports as pending review (with next steps); the hub refuses it on /ws. */
export const PENDING_KEY = 'sk-prov-e2e-pending-000';
const FAKE_GPU_DIR = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');
const CLI = path.join(repoRoot, 'bin', 'swan-provider.js');

export interface StackOptions {
  /** Put the provider key in config.toml (false: the console starts with onboarding). */
  withKey: boolean;
  /** Put the stand-in nvidia-smi first on the agent's PATH. */
  gpu: boolean;
  /** Tokens per second of the simulated engine. */
  tokensPerSecond: number;
  /** Point ServiceURL at a stand-in of the platform API (rates for the engine's first model, me/stats)
   * instead of the dev hub, and put one hub request finished this many hours ago in the ledger. */
  platform?: { historyHoursAgo: number };
  /** false: the dev hub reports earnings as not enabled (`dev-hub --no-earnings`); it pays by default. */
  earnings?: boolean;
  /** A file the stand-in nvidia-smi reads its temperature from (the guard rails' spec). */
  gpuTemperatureFile?: string;
  /** Several GPUs (the stand-in's FAKE_GPU_COUNT), with a steady utilisation and processes read from a file. */
  gpus?: { count: number; utilization: number; appsFile: string; checkSeconds: number };
  /** A file the stand-in nvidia-smi keeps the power limit in (`<file>.deny` present: -pl is refused as for a user). */
  gpuPowerLimitFile?: string;
  /** models.json's `gpus` for the engine's models, by model id (where the owner says each runs). */
  modelGpus?: Record<string, number[]>;
}

export const defaultStackOptions: StackOptions = { withKey: true, gpu: true, tokensPerSecond: 40 };

export interface DevProviderView {
  nodeId: string;
  nodeName: string;
  models: string[];
  registers: number;
  connected: boolean;
  /** What the provider's last model_health_update said, per model. */
  health?: Record<string, string>;
}

type Child = ChildProcessByStdio<null, Readable, Readable>;

export const CONSOLE_LINE = /console: (http:\/\/127\.0\.0\.1:\d+\/\?code=[A-Za-z0-9_-]+)/;

export class Proc {
  readonly output: string[] = [];
  private exited: Promise<void>;
  constructor(
    readonly name: string,
    readonly child: Child,
  ) {
    const keep = (d: Buffer) => {
      this.output.push(d.toString('utf8'));
      if (this.output.length > 2000) this.output.splice(0, 1000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  /** Resolves with the first match of `re` on stdout; rejects when the process exits or the deadline passes. */
  waitForLine(re: RegExp, timeoutMs = 20_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      let buf = '';
      const onData = (d: Buffer) => {
        buf += d.toString('utf8');
        const m = re.exec(buf);
        if (m) {
          done();
          resolve(m);
        }
      };
      const onExit = (code: number | null) => {
        done();
        reject(new Error(`${this.name} exited (${code}) before printing ${re}:\n${this.output.join('')}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name} did not print ${re} within ${timeoutMs} ms:\n${this.output.join('')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.child.stdout.off('data', onData);
        this.child.off('exit', onExit);
      };
      this.child.stdout.on('data', onData);
      this.child.once('exit', onExit);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(killer);
  }
}

export function startCli(name: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Proc(name, child);
}

export class ConsoleStack {
  private constructor(
    readonly home: string,
    readonly hubUrl: string,
    readonly consoleUrl: string,
    readonly engine: SimulatedEngine,
    private hub: Proc,
    private agent: Proc,
    private readonly root: string,
    private readonly agentArgs: string[],
    private readonly agentEnv: NodeJS.ProcessEnv,
    readonly platform?: PlatformApi,
  ) {}

  static async start(o: StackOptions): Promise<ConsoleStack> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-'));
    const home = path.join(root, 'home');
    fs.mkdirSync(home, { recursive: true });
    // The agent must read only our config: no key or hub from the developer's environment.
    const baseEnv: NodeJS.ProcessEnv = { ...process.env };
    delete baseEnv.INFERENCE_API_KEY;
    delete baseEnv.INFERENCE_WS_URL;
    baseEnv.CP_PATH = path.join(root, 'no-go-provider'); // never the developer's ~/.swan/computing key
    const hub = startCli(
      'dev hub',
      [
        'dev-hub',
        '--port',
        '0',
        '--token',
        PROVIDER_KEY,
        '--pending-token',
        PENDING_KEY,
        '--home',
        path.join(root, 'hub'),
        ...(o.earnings === false ? ['--no-earnings'] : []),
      ],
      baseEnv,
    );
    let engine: SimulatedEngine | undefined;
    let agent: Proc | undefined;
    let platform: PlatformApi | undefined;
    try {
      const [, hubUrl] = await hub.waitForLine(/dev hub listening on (http:\/\/127\.0\.0\.1:\d+)/);
      engine = await startSimulatedEngine({ host: '127.0.0.1', tokensPerSecond: o.tokensPerSecond, firstTokenMs: 50 });
      if (o.platform) {
        platform = await PlatformApi.start(PROVIDER_KEY);
        const model = engine.models[0]!;
        platform.routes['/api/v1/stats/model-demand'] = {
          kind: 'json',
          body: {
            code: 0,
            data: { models: [{ model_id: model, input_price: 0.5, output_price: 2, provider_input_price: 0.4, provider_output_price: 1.6, tier: 'standard' }] },
          },
        };
        const ledger = Ledger.open(path.join(home, 'ledger.sqlite'));
        const at = Date.now() - o.platform.historyHoursAgo * 3_600_000;
        ledger.setNetworkRates(new Map([[model, { inputPerM: 0.4, outputPerM: 1.6 }]]));
        ledger.record({
          requestId: 'e2e-history-1',
          source: 'hub',
          model,
          endpoint: engine.url,
          startedAt: at - 2000,
          finishedAt: at,
          tokensIn: 1000,
          tokensOut: 10_000,
          estimated: false,
          latencyMs: 2000,
          ttftMs: 100,
          tokensPerSecond: 5000,
          status: 'ok',
          statusCode: 200,
          error: null,
          energyWh: 100,
        });
        ledger.close();
      }
      const config = path.join(root, 'config.toml');
      const wsUrl = hubUrl!.replace(/^http/, 'ws');
      fs.writeFileSync(
        config,
        [
          '[API]',
          'NodeName = "e2e-provider"',
          '[Inference]',
          'Enable = true',
          `WebSocketURL = "${wsUrl}"`,
          `ServiceURL = "${platform?.url ?? hubUrl}"`,
          ...(o.withKey ? [`ApiKey = "${PROVIDER_KEY}"`] : []),
          '[Agent]',
          'Discovery = false',
          'HealthCheckIntervalSeconds = 2',
          ...(o.gpus ? [`GpuProcessCheckSeconds = ${o.gpus.checkSeconds}`] : []),
          '',
        ].join('\n'),
      );
      fs.writeFileSync(
        path.join(root, 'models.json'),
        JSON.stringify(
          Object.fromEntries(engine.models.map((m) => [m, { endpoint: engine!.url, ...(o.modelGpus?.[m] ? { gpus: o.modelGpus[m] } : {}) }])),
          null,
          2,
        ),
      );
      const env: NodeJS.ProcessEnv = {
        ...baseEnv,
        ...(o.gpuTemperatureFile ? { FAKE_GPU_TEMP_FILE: o.gpuTemperatureFile } : {}),
        ...(o.gpuPowerLimitFile ? { FAKE_GPU_PL_FILE: o.gpuPowerLimitFile } : {}),
        ...(o.gpus ? { FAKE_GPU_COUNT: String(o.gpus.count), FAKE_GPU_UTIL: String(o.gpus.utilization), FAKE_GPU_APPS_FILE: o.gpus.appsFile } : {}),
        PATH: o.gpu
          ? `${FAKE_GPU_DIR}${path.delimiter}${process.env.PATH ?? ''}`
          : (process.env.PATH ?? '')
              .split(path.delimiter)
              .filter((d) => d !== FAKE_GPU_DIR)
              .join(path.delimiter),
      };
      const args = ['run', '--config', config, '--home', home, '--no-discovery'];
      agent = startCli('agent', [...args, '--console', '127.0.0.1:0'], env);
      const [, consoleUrl] = await agent.waitForLine(CONSOLE_LINE);
      return new ConsoleStack(home, hubUrl!, consoleUrl!, engine, hub, agent, root, args, env, platform);
    } catch (e) {
      await agent?.stop();
      await platform?.close();
      await engine?.close();
      await hub.stop();
      fs.rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  /** Everything the processes printed (attached to failed tests). */
  logs(): string {
    return `--- dev hub ---\n${this.hub.output.join('')}\n--- agent ---\n${this.agent.output.join('')}`;
  }

  async providers(): Promise<DevProviderView[]> {
    const res = await fetch(`${this.hubUrl}/dev/providers`);
    if (!res.ok) throw new Error(`GET /dev/providers: HTTP ${res.status}`);
    return (await res.json()) as DevProviderView[];
  }

  async provider(): Promise<DevProviderView | undefined> {
    return (await this.providers()).find((p) => p.nodeName === 'e2e-provider' || p.connected);
  }

  /**
   * Resolves once the hub has a registered provider serving `model`: a user's request sent before that is
   * the hub's "no provider" 503, which is not what the specs that send traffic are about.
   */
  async serving(model: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // As the hub picks (dev-hub.ts pick): registered with the model, and not reported unhealthy — a deep check
      // that missed its deadline on a loaded machine says so for a moment, and the hub routes nothing meanwhile.
      const providers = await this.providers();
      if (providers.some((p) => p.connected && p.models.includes(model) && p.health?.[model] !== 'unhealthy')) return;
      if (Date.now() > deadline)
        throw new Error(
          `no provider serves ${model} at the dev hub within ${timeoutMs} ms: ${JSON.stringify(providers.map((p) => ({ connected: p.connected, models: p.models, health: p.health })))}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A chat completion through the dev hub (streamed unless told), as a network user would send it. Resolves with the text. */
  async chat(model: string, maxTokens = 40, o: { stream?: boolean } = {}): Promise<string> {
    await this.serving(model);
    const stream = o.stream ?? true;
    const res = await fetch(`${this.hubUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream, max_tokens: maxTokens, messages: [{ role: 'user', content: 'Tell me about GPUs.' }] }),
    });
    if (!res.ok) throw new Error(`hub chat: HTTP ${res.status} ${await res.text()}`);
    if (!stream) return ((await res.json()) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content ?? '';
    let text = '';
    for (const block of (await res.text()).split('\n\n')) {
      const data = block.replace(/^data: /, '').trim();
      if (!data || data === '[DONE]') continue;
      const chunk = JSON.parse(data) as { choices?: { delta?: { content?: string } }[] };
      text += chunk.choices?.[0]?.delta?.content ?? '';
    }
    return text;
  }

  /**
   * The owner approves (or denies) a change the console asked for, as a headless owner does: with
   * `swan-provider approve CODE` on the agent's home. Resolves with what the command printed.
   */
  async approve(code: string, deny = false): Promise<string> {
    const p = startCli('approve', ['approve', code, '--yes', ...(deny ? ['--deny'] : []), '--home', this.home], this.agentEnv);
    const code_ = await new Promise<number | null>((resolve) => p.child.once('exit', (c) => resolve(c)));
    const out = p.output.join('');
    if (code_ !== 0) throw new Error(`swan-provider approve ${code} exited ${code_}: ${out}`);
    return out;
  }

  /** Rewrites models.json beside config.toml (the agent applies it live). */
  writeModels(models: Record<string, { endpoint: string; local_model?: string }>): void {
    const file = path.join(this.root, 'models.json');
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(models, null, 2));
    fs.renameSync(`${file}.tmp`, file);
  }

  /** Stops the dev hub (the agent's link drops and it keeps redialling). */
  stopHub(): Promise<void> {
    return this.hub.stop();
  }

  /** Starts the dev hub again on the same port; resolves once it listens. */
  async startHub(): Promise<void> {
    const port = new URL(this.hubUrl).port;
    this.hub = startCli('dev hub', ['dev-hub', '--port', port, '--token', PROVIDER_KEY, '--home', path.join(this.root, 'hub')], this.agentEnv);
    await this.hub.waitForLine(/dev hub listening on/);
  }

  /** Stops the agent (the console goes with it). */
  stopAgent(): Promise<void> {
    return this.agent.stop();
  }

  /** Starts the agent again with its console on the same port; resolves with the new console URL (a new token). */
  async restartAgent(): Promise<string> {
    await this.agent.stop();
    const port = new URL(this.consoleUrl).port;
    this.agent = startCli('agent', [...this.agentArgs, '--console', `127.0.0.1:${port}`], this.agentEnv);
    const [, url] = await this.agent.waitForLine(CONSOLE_LINE);
    return url!;
  }

  async close(): Promise<void> {
    await this.agent.stop();
    await this.platform?.close();
    await this.engine.close();
    await this.hub.stop();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}
