// The `swan-provider` command as users run it: a child process of bin/swan-provider.js.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub } from '../../../src/cli/dev-hub';
import { loadConfig } from '../../../src/core/config/config';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { repoRoot } from '../../support/traces';
import { TEST_KEY, chunkText, readSse, tempHome, until } from '../../support/stack';
import { summarizeTrace } from '../../support/traces';
import { writeConfigToml } from '../../support/config-toml';

const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');
const NO_GO_KEY = path.join(repoRoot, 'no-go-provider-here');

function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // CP_PATH points nowhere: the agent never reads a real Go provider key (~/.swan/computing) in tests.
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CP_PATH: NO_GO_KEY, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

// Each test runs several commands, each its own Node process: on a busy 2-core machine five of them take more
// than the default 30 s (the keys test took 23 s beside two CPU-bound loops).
describe('swan-provider', { timeout: 90_000 }, () => {
  it('prints help listing every command', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const cmd of ['run', 'dev-hub', 'doctor', 'init', 'engines', 'usage', 'keys', 'demo', 'service']) expect(r.stdout).toContain(cmd);
  });

  it('run without a config says how to get one', async () => {
    const home = tempHome();
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const r = await runCli(['run', '--home', home]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('No config file');
    expect(r.stderr).toContain('swan-provider init');
  });

  it('run --init-if-missing (npm start headless) writes a first config and serves the console for onboarding', async () => {
    const home = tempHome();
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    // The first-run config points at mainnet; the console's overlay keeps this test off the real hosts.
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ hubUrl: 'ws://127.0.0.1:9', serviceUrl: 'http://127.0.0.1:9' }));
    const child = spawn(process.execPath, [BIN, 'run', '--home', home, '--init-if-missing', '--no-discovery', '--console', '127.0.0.1:0'], {
      env: { ...process.env, CP_PATH: NO_GO_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    cleanup.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    await until(() => /console: http:\/\/127\.0\.0\.1:\d+\/\?code=\S+/.test(out), 'console URL printed', 15_000);
    expect(fs.existsSync(path.join(home, 'config.toml'))).toBe(true);
    const url = /console: (\S+)/.exec(out)![1]!;
    const page = await fetch(url, { redirect: 'manual' });
    expect([200, 302, 303]).toContain(page.status);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('init writes a config the agent accepts, and refuses to overwrite it', async () => {
    const dir = tempHome();
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const r = await runCli(['init', '--dir', dir], { PATH: '/nonexistent' });
    expect(r.code).toBe(0);
    const cfg = loadConfig(path.join(dir, 'config.toml'), {});
    expect(cfg.agent.heartbeatIntervalMs).toBe(30_000);
    // The first-run network is mainnet (HUB-PROTOCOL.md "Addresses"); nothing here dials it.
    expect([cfg.webSocketUrl, cfg.serviceUrl]).toEqual(['wss://inference-ws.swanchain.io', 'https://api.swanchain.io']);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'models.json'), 'utf8'))).toEqual(expect.any(Object));
    const again = await runCli(['init', '--dir', dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already exists');
  });

  it('refuses a bad config with the file, the line and the problem', async () => {
    const dir = tempHome();
    cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.writeFileSync(path.join(dir, 'config.toml'), '[API]\nNodeName = "x"\n[Agent]\nHeartbeatIntervalSeconds = "often"\n');
    const r = await runCli(['run', '--home', dir, '--config', path.join(dir, 'config.toml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/config\.toml:4: .*HeartbeatIntervalSeconds/);
  });

  it('keys create prints a key once; list shows names only; revoke removes it', async () => {
    const home = tempHome();
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const c = await runCli(['keys', 'create', '--home', home, '--name', 'laptop']);
    expect(c.code).toBe(0);
    const key = c.stdout.trim();
    expect(key).toMatch(/^sk-swan-/);
    expect(fs.readFileSync(path.join(home, 'gateway-keys.json'), 'utf8')).not.toContain(key);
    const l = await runCli(['keys', 'list', '--home', home]);
    expect(l.stdout).toContain('laptop');
    expect(l.stdout).not.toContain(key);
    expect((await runCli(['keys', 'revoke', 'laptop', '--home', home])).code).toBe(0);
    expect((await runCli(['keys', 'revoke', 'laptop', '--home', home])).code).toBe(1);
    // A name the rules refuse is a usage error: exit 2, with what names may hold.
    const bad = await runCli(['keys', 'create', '--home', home, '--name', 'bad name!']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('letters, digits');
  });

  it('dev-hub + run serve a curl-style request end to end; doctor is happy only when the verdict is serving', async () => {
    // A model the dev hub's catalogue lists, served by a hub that pays: routed and earning.
    const engine: TestEngine = await startTestEngine({ models: ['simulated-llama-3.1-8b-instruct'] });
    cleanup.push(() => engine.close());
    const hub: DevHub = await startDevHub({ token: TEST_KEY, earningsEnabled: true });
    cleanup.push(() => hub.close());
    const home = tempHome();
    cleanup.push(() => fs.rmSync(home, { recursive: true, force: true }));
    const model = engine.modelIds[0]!;
    fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [model]: { endpoint: `${engine.url}/v1` } }));
    writeConfigToml(home, {
      API: { NodeName: 'cli-node' },
      Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
      Agent: { Discovery: false },
    });
    const doctor = await runCli(['doctor', '--home', home]);
    // Named as the hub it is (a custom one), never "the Swan network".
    expect(doctor.stdout).toContain(`All good: Serving 1 model to the custom hub at ${new URL(hub.wsUrl).host}: routed and earning.`);
    expect(doctor.stdout).toContain('status: active (step 4 of 4: Active)');
    expect(doctor.code).toBe(0);
    // No "All good" where the network would not route the model, or would not pay for it.
    const unknownHome = tempHome();
    cleanup.push(() => fs.rmSync(unknownHome, { recursive: true, force: true }));
    fs.writeFileSync(path.join(unknownHome, 'models.json'), JSON.stringify({ 'my-own-model': { endpoint: `${engine.url}/v1`, local_model: model } }));
    writeConfigToml(unknownHome, {
      API: { NodeName: 'cli-node' },
      Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
      Agent: { Discovery: false },
    });
    const unrouted = await runCli(['doctor', '--home', unknownHome]);
    expect(unrouted.code).toBe(1);
    expect(unrouted.stdout).not.toContain('All good');
    expect(unrouted.stdout).toContain("✗ my-own-model is not in the network's catalogue");
    expect(unrouted.stdout).toContain('Not routed:');
    const unpaid = await startDevHub({ token: TEST_KEY });
    cleanup.push(() => unpaid.close());
    writeConfigToml(home, {
      API: { NodeName: 'cli-node' },
      Inference: { WebSocketURL: unpaid.wsUrl, ServiceURL: unpaid.url, ApiKey: TEST_KEY },
      Agent: { Discovery: false },
    });
    const notEarning = await runCli(['doctor', '--home', home]);
    expect(notEarning.code).toBe(1);
    expect(notEarning.stdout).toContain('✗ Earnings are not enabled for this provider');
    expect(notEarning.stdout).toContain('Not earning:');
    writeConfigToml(home, {
      API: { NodeName: 'cli-node' },
      Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
      Agent: { Discovery: false },
    });
    // A pending provider: doctor says it cannot connect yet, with the platform's next steps.
    hub.platform.setStatus(TEST_KEY, 'pending');
    const pending = await runCli(['doctor', '--home', home]);
    expect(pending.code).toBe(1);
    expect(pending.stdout).toContain('this provider cannot connect yet');
    expect(pending.stdout).toContain('status: pending (step 1 of 4: Request approval)');
    // The platform's steps, cleaned of their numbers and the Go provider's commands (platform/next-steps.ts).
    expect(pending.stdout).toContain('next: Use "Ask for approval" under Settings → Payout & activation (or `swan-provider account request-approval`)');
    expect(pending.stdout).not.toMatch(/next: \d+\.|computing-provider/);
    hub.platform.setStatus(TEST_KEY, 'active');
    const child: ChildProcess = spawn(process.execPath, [BIN, 'run', '--home', home, '--config', path.join(home, 'config.toml')], {
      env: { ...process.env, CP_PATH: NO_GO_KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    cleanup.push(
      () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    );
    await until(() => hub.providers().some((p) => p.connected && p.models.includes(model)), 'agent registered', 15_000);
    const res = await fetch(`${hub.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chunkText(await readSse(res))).toBe(summarizeTrace('vllm-chat-basic.sse').text);
    // one readable line per served request, with tokens and latency
    await until(() => /hub request .* ok, \d+ in \/ \d+ out.*, \d+ ms/.test(err), `request log line in: ${err}`, 5000);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(fs.existsSync(path.join(home, 'logs', 'agent.jsonl'))).toBe(true);
  });
});
