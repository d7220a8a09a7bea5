// A first run from an empty home, as `npm start` makes it: `swan-provider run --init-if-missing` (the
// first-run config points at mainnet) with its console, a simulated engine nothing has told the agent
// about (the owner adds it in the console), and stand-ins of the network the test walks to: dev hubs for
// the hubs, the platform API stand-in for mainnet's ServiceURL. The named networks reach their stand-ins
// through SWAN_NETWORK_STAND_INS, read by the agent at start (src/core/config/network-stand-ins.ts), so the
// console and settings hold the real addresses while nothing leaves this machine.
import { test as base, expect, type Page } from '@playwright/test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startSimulatedEngine, type SimulatedEngine } from '../../src/cli/sim-engine';
import { PlatformApi } from '../../test/support/platform-api';
import { CONSOLE_LINE, PROVIDER_KEY, startCli, type DevProviderView, type Proc } from './stack';

export type Network = 'mainnet' | 'testnet' | 'custom';

export interface DevHubProc {
  /** http://127.0.0.1:PORT (its platform API too). */
  url: string;
  /** ws://127.0.0.1:PORT (WebSocketURL). */
  wsUrl: string;
  proc: Proc;
  providers(): Promise<DevProviderView[]>;
  chat(model: string): Promise<string>;
}

function baseEnv(root: string): NodeJS.ProcessEnv {
  // The agent must read only this home: no key or hub from the developer's environment.
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  delete env.SWAN_NETWORK_STAND_INS;
  env.CP_PATH = path.join(root, 'no-go-provider');
  return env;
}

async function startDevHub(root: string, name: string): Promise<DevHubProc> {
  const proc = startCli(`dev hub (${name})`, ['dev-hub', '--port', '0', '--token', PROVIDER_KEY, '--home', path.join(root, `hub-${name}`)], baseEnv(root));
  const [, url] = await proc.waitForLine(/dev hub listening on (http:\/\/127\.0\.0\.1:\d+)/);
  return {
    url: url!,
    wsUrl: url!.replace(/^http/, 'ws'),
    proc,
    providers: async () => {
      const res = await fetch(`${url}/dev/providers`);
      if (!res.ok) throw new Error(`GET /dev/providers: HTTP ${res.status}`);
      return (await res.json()) as DevProviderView[];
    },
    chat: async (model) => {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream: false, max_tokens: 12, messages: [{ role: 'user', content: 'Hello?' }] }),
      });
      if (!res.ok) throw new Error(`hub chat: HTTP ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
      return body.choices?.[0]?.message?.content ?? '';
    },
  };
}

export class FirstRunStack {
  private constructor(
    readonly root: string,
    readonly home: string,
    readonly consoleUrl: string,
    readonly engine: SimulatedEngine,
    private readonly hubs: Partial<Record<Network, DevHubProc>>,
    /** mainnet's ServiceURL (the platform API): provider status, rates, stats. */
    private api: PlatformApi,
    private readonly agent: Proc,
  ) {}

  get platform(): PlatformApi {
    return this.api;
  }

  /** The platform API goes away (the network is down for it): its port stops answering. */
  async platformDown(): Promise<void> {
    this.downPort = Number(new URL(this.api.url).port);
    await this.api.close();
  }

  private downPort = 0;

  /** The platform API is back on the same address. */
  async platformUp(): Promise<void> {
    this.api = await PlatformApi.start(PROVIDER_KEY, this.downPort);
  }

  /** The hub standing in for mainnet / testnet, or the custom hub (the dev hub as an owner runs it). */
  hub(network: Network): DevHubProc {
    const h = this.hubs[network];
    if (!h) throw new Error(`no hub started for ${network}`);
    return h;
  }

  /** Starts the hubs of the networks the test walks to (each one a process: only those). */
  static async start(networks: Network[]): Promise<FirstRunStack> {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-e2e-first-'));
    const home = path.join(root, 'home');
    const started: Array<() => Promise<void>> = [];
    try {
      const hubs: Partial<Record<Network, DevHubProc>> = {};
      await Promise.all(
        networks.map(async (n) => {
          const h = await startDevHub(root, n);
          hubs[n] = h;
          started.push(() => h.proc.stop());
        }),
      );
      const platform = await PlatformApi.start(PROVIDER_KEY);
      started.push(() => platform.close());
      const engine = await startSimulatedEngine({ host: '127.0.0.1', tokensPerSecond: 200, firstTokenMs: 20 });
      started.push(() => engine.close());
      const env = baseEnv(root);
      env.SWAN_NETWORK_STAND_INS = JSON.stringify({
        ...(hubs.mainnet ? { mainnet: { hubUrl: hubs.mainnet.wsUrl, serviceUrl: platform.url } } : {}),
        ...(hubs.testnet ? { testnet: { hubUrl: hubs.testnet.wsUrl, serviceUrl: hubs.testnet.url } } : {}),
      });
      const agent = startCli('agent', ['run', '--home', home, '--init-if-missing', '--no-discovery', '--console', '127.0.0.1:0'], env);
      started.push(() => agent.stop());
      const [, consoleUrl] = await agent.waitForLine(CONSOLE_LINE);
      return new FirstRunStack(root, home, consoleUrl!, engine, hubs, platform, agent);
    } catch (e) {
      for (const stop of started.reverse()) await stop();
      fs.rmSync(root, { recursive: true, force: true });
      throw e;
    }
  }

  logs(): string {
    return [
      `--- agent ---\n${this.agent.output.join('')}`,
      ...Object.entries(this.hubs).map(([n, h]) => `--- dev hub (${n}) ---\n${h!.proc.output.join('')}`),
      `--- platform stand-in hits ---\n${JSON.stringify(this.platform.hits)}`,
    ].join('\n');
  }

  /** What the agent printed so far. */
  agentOutput(): string {
    return this.agent.output.join('');
  }

  async close(): Promise<void> {
    await this.agent.stop();
    await Promise.all(Object.values(this.hubs).map((h) => h!.proc.stop()));
    await this.api.close().catch(() => undefined);
    await this.engine.close();
    fs.rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * The first-run specs' fixtures: `first`, a FirstRunStack for the networks of the `networks` option (default: a
 * custom hub), its processes' log attached when a test fails; `app`, the console loaded from its one-time link,
 * failing the test on any page error.
 */
export const firstRunTest = base.extend<{ networks: Network[]; first: FirstRunStack; app: Page }>({
  networks: [['custom'], { option: true }],
  first: async ({ networks }, use, testInfo) => {
    const stack = await FirstRunStack.start(networks);
    await use(stack);
    if (testInfo.status !== testInfo.expectedStatus) await testInfo.attach('processes.log', { body: stack.logs(), contentType: 'text/plain' });
    await stack.close();
  },
  app: async ({ page, first }, use) => {
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    await page.goto(first.consoleUrl);
    await expect(page.locator('[data-app-state="loaded"]')).toBeVisible();
    await use(page);
    expect(problems, 'the page logged errors').toEqual([]);
  },
});
