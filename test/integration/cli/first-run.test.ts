// The first-run surface of the CLI as a newcomer meets it: one --home / SWAN_HOME rule, --version,
// --host HOST:PORT, init (mainnet by default), meaningful exit codes, busy ports, the stable console
// token file, service install/status, doctor reading what the agent reads.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { startDevHub } from '../../../src/cli/dev-hub';
import { buildProgram } from '../../../src/cli/main';
import { AGENT_VERSION } from '../../../src/core/agent';
import { loadConfig } from '../../../src/core/config/config';
import { startTestEngine } from '../../support/engine-server';
import { TEST_KEY, freePort, tempHome } from '../../support/stack';
import { CliProcess, offlineHome, runCli } from '../../support/cli/cli';
import { writeConfigToml } from '../../support/config-toml';

const cleanup: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function home(): string {
  const h = tempHome();
  cleanup.push(() => fs.rmSync(h, { recursive: true, force: true }));
  return h;
}

async function occupy(port?: number): Promise<number> {
  const srv = net.createServer();
  const p = port ?? (await freePort());
  await new Promise<void>((resolve) => srv.listen(p, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((r) => srv.close(r)));
  return p;
}

// Each test runs several commands, each its own Node process: on a busy 2-core machine (two CPU-bound loops beside
// the suite) the service test took more than the default 30 s.
const LONG = 90_000;

const CONSOLE_URL = /console: (http:\/\/127\.0\.0\.1:(\d+)\/\?code=([A-Za-z0-9_-]+))/;

describe('flags every command shares', { timeout: LONG }, () => {
  it('--version prints the app version and exits 0; an unknown flag exits 2', async () => {
    const v = await runCli(['--version']);
    expect([v.code, v.stdout.trim()]).toEqual([0, AGENT_VERSION]);
    const bad = await runCli(['engines', '--no-such-flag']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--no-such-flag'");
  });

  it('every command takes --home, defaulting to SWAN_HOME (one rule)', async () => {
    const leaves: Command[] = [];
    const walk = (c: Command) => (c.commands.length ? c.commands.forEach(walk) : leaves.push(c));
    walk(buildProgram());
    expect(leaves.map((c) => c.name())).toEqual(expect.arrayContaining(['run', 'init', 'engines', 'doctor', 'demo', 'status', 'install']));
    for (const c of leaves) {
      const home = c.options.find((o) => o.long === '--home');
      expect(home, c.name()).toBeDefined();
      expect(home!.defaultValueDescription).toContain('SWAN_HOME');
    }
    const r = await runCli(['engines', '--help']);
    expect(r.stdout).toContain('--home <dir>');
  });

  it('SWAN_HOME and --home are the same rule: init writes there, doctor and run read it', async () => {
    const h = home();
    const init = await runCli(['init'], { SWAN_HOME: h, PATH: '/nonexistent' });
    expect(init.code).toBe(0);
    const cfg = loadConfig(path.join(h, 'config.toml'), {});
    // The first run points at Swan Inference mainnet (nothing in this test dials it).
    expect([cfg.webSocketUrl, cfg.serviceUrl]).toEqual(['wss://inference-ws.swanchain.io', 'https://api.swanchain.io']);
    expect(init.stdout).toContain(`--home "${h}"`);
    const viaFlag = await runCli(['init', '--home', h]);
    expect(viaFlag.code).toBe(1);
    expect(viaFlag.stderr).toContain(`${path.join(h, 'config.toml')} already exists`);
  });

  it('init --network local and --host HOST:PORT: the dev hub addresses, the engine in EngineHosts and its models in models.json', async () => {
    const engine = await startTestEngine({ engineType: 'vllm' });
    cleanup.push(() => engine.close());
    const h = home();
    const r = await runCli(['init', '--home', h, '--network', 'local', '--host', `127.0.0.1:${engine.port}`], { PATH: '/nonexistent' });
    expect(r.code).toBe(0);
    const cfg = loadConfig(path.join(h, 'config.toml'), {});
    expect([cfg.webSocketUrl, cfg.serviceUrl]).toEqual(['ws://127.0.0.1:8081', 'http://127.0.0.1:8081']);
    expect(cfg.agent.engineHosts).toEqual([`http://127.0.0.1:${engine.port}`]);
    expect(Object.keys(cfg.modelEntries)).toEqual(['Qwen2.5-1.5B-Instruct']);
    const wrong = await runCli(['init', '--home', h, '--network', 'moon']);
    expect(wrong.code).toBe(2);
  });

  it('engines --host takes HOST:PORT without a scheme, --json prints what it found, a bad address exits 2', async () => {
    const engine = await startTestEngine({ engineType: 'ollama' });
    cleanup.push(() => engine.close());
    const r = await runCli(['engines', '--json', '--home', home(), '--host', `127.0.0.1:${engine.port}`]);
    expect(r.code).toBe(0);
    const found = (JSON.parse(r.stdout) as Array<{ url: string; type: string; reachable: boolean }>).find((e) => e.url === `http://127.0.0.1:${engine.port}`);
    expect(found).toMatchObject({ type: 'ollama', reachable: true });
    const bad = await runCli(['engines', '--host', 'not a host']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must look like 127.0.0.1:7777');
  });
});

describe('busy ports', { timeout: LONG }, () => {
  it('a busy console port is one line with the fix, exit 2, before the agent starts anything', async () => {
    const h = home();
    const port = await occupy();
    const r = await runCli(['run', '--home', h, '--init-if-missing', '--no-discovery', '--console', `127.0.0.1:${port}`]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `The console address 127.0.0.1:${port} is already in use (another swan-provider, or another program, listens there). Start with another one: --console 127.0.0.1:${port + 1}`,
    ]);
    expect(r.stderr).not.toContain('EADDRINUSE');
    // Nothing started: no identity, no ledger, no log of an agent.
    expect(fs.readdirSync(h).filter((f) => /identity|ledger|node_key|key\.json/.test(f))).toEqual([]);
  });

  it('a busy gateway port (from config.toml) is refused the same way, naming the setting to change', async () => {
    const h = home();
    const port = await occupy();
    writeConfigToml(h, {
      Inference: { WebSocketURL: 'ws://127.0.0.1:1' },
      Agent: { Discovery: false },
      Gateway: { Enable: true, Listen: `127.0.0.1:${port}` },
    });
    const r = await runCli(['run', '--home', h]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`The local gateway address 127.0.0.1:${port} is already in use`);
    expect(r.stderr).toContain(`[Gateway] Listen in ${path.join(h, 'config.toml')}`);
  });

  it('dev-hub on a busy port: one line with another port to use, exit 2, no stack trace', async () => {
    const port = await occupy();
    const r = await runCli(['dev-hub', '--port', String(port)]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `The dev hub address 127.0.0.1:${port} is already in use (another swan-provider, or another program, listens there). Start it on another port: swan-provider dev-hub --port ${port + 1} (and point WebSocketURL and ServiceURL there).`,
    ]);
    expect(r.stderr).not.toContain('EADDRINUSE');
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });

  it('demo with a busy console port: the same line, exit 2', async () => {
    const port = await occupy();
    const r = await runCli(['demo', '--home', home(), '--console', `127.0.0.1:${port}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--console 127.0.0.1:${port + 1}`);
  });
});

describe('a console URL that stays the same', { timeout: LONG }, () => {
  it('run --console-token-file creates a 0600 token file; its bookmark URL (?token=) opens the console on every start', async () => {
    const h = offlineHome(home());
    const tokenFile = path.join(h, 'console-token');
    const port = await freePort();
    for (let i = 0; i < 2; i++) {
      const p = CliProcess.start([
        'run',
        '--home',
        h,
        '--init-if-missing',
        '--no-discovery',
        '--console',
        `127.0.0.1:${port}`,
        '--console-token-file',
        tokenFile,
      ]);
      cleanup.push(() => p.stop());
      await p.line(CONSOLE_URL, 'console URL printed');
      const bookmark = `http://127.0.0.1:${port}/?token=${fs.readFileSync(tokenFile, 'utf8').trim()}`;
      const res = await fetch(bookmark, { redirect: 'manual' });
      expect(res.status).toBe(302);
      expect(res.headers.get('set-cookie')).toMatch(/^swan_session_\d+=/);
      expect(await p.stop()).toBe(0);
    }
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    const wrong = await runCli(['run', '--home', h, '--console', `127.0.0.1:${port}`, '--console-token-file', path.join(h, 'config.toml')]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('does not hold a console token');
  });

  it('service install refuses a home without config and says how to make one; with one, the unit serves the console with the token file, and service status prints the URL', async () => {
    const h = home();
    const xdg = home();
    const env = { XDG_CONFIG_HOME: xdg };
    const refused = await runCli(['service', 'install', '--home', h], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`swan-provider init --home "${h}"`);
    expect(fs.existsSync(path.join(xdg, 'systemd', 'user', 'swan-provider.service'))).toBe(false);

    expect((await runCli(['init', '--home', h], { PATH: '/nonexistent' })).code).toBe(0);
    const ok = await runCli(['service', 'install', '--home', h], env);
    expect(ok.code).toBe(0);
    const unit = fs.readFileSync(path.join(xdg, 'systemd', 'user', 'swan-provider.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=.* run --home "[^"]+" --console 127\.0\.0\.1:7777 --console-token-file "[^"]+console-token"$/m);
    const tokenFile = path.join(h, 'console-token');
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    const url = `http://127.0.0.1:7777/?token=${fs.readFileSync(tokenFile, 'utf8').trim()}`;
    expect(ok.stdout).toContain(url);
    const status = await runCli(['service', 'status', '--home', h], env);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`console: ${url}`);
    const none = await runCli(['service', 'status'], { XDG_CONFIG_HOME: home() });
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('No service installed');
  });
});

describe('doctor reads what the agent reads', { timeout: LONG }, () => {
  it('the key saved in the console (secrets.json) and the network chosen there (settings.json); "nothing to serve" is a problem', async () => {
    const hub = await startDevHub({ token: TEST_KEY, earningsEnabled: true });
    cleanup.push(() => hub.close());
    const h = home();
    expect((await runCli(['init', '--home', h], { PATH: '/nonexistent' })).code).toBe(0);
    // config.toml says mainnet and has no key; the console saved both a custom hub and the key.
    fs.writeFileSync(path.join(h, 'settings.json'), JSON.stringify({ hubUrl: hub.wsUrl, serviceUrl: hub.url }));
    fs.writeFileSync(path.join(h, 'secrets.json'), JSON.stringify({ providerKey: TEST_KEY }), { mode: 0o600 });
    fs.writeFileSync(path.join(h, 'config.toml'), fs.readFileSync(path.join(h, 'config.toml'), 'utf8').replace('Discovery = true', 'Discovery = false'));
    const r = await runCli(['doctor', '--home', h]);
    expect(r.stdout).toContain(`✓ provider key set (${TEST_KEY.slice(0, 8)}…, from the console`);
    expect(r.stdout).toContain(`network: custom hub (${hub.wsUrl}`);
    expect(r.stdout).toContain(`✓ hub ${hub.wsUrl}/ws answers`);
    expect(r.stdout).toContain('✗ nothing to serve');
    expect(r.stdout).not.toContain('All good');
    expect(r.code).toBe(1);

    // With an engine in models.json under an id the network's catalogue lists, it is all good.
    const engine = await startTestEngine({ engineType: 'vllm' });
    cleanup.push(() => engine.close());
    fs.writeFileSync(
      path.join(h, 'models.json'),
      JSON.stringify({ 'Qwen/Qwen2.5-7B-Instruct': { endpoint: engine.url, local_model: 'Qwen2.5-1.5B-Instruct' } }),
    );
    const good = await runCli(['doctor', '--home', h]);
    expect(good.stdout).toContain('✓ serving 1 model(s): Qwen/Qwen2.5-7B-Instruct');
    expect(good.stdout).toContain('All good');
    expect(good.code).toBe(0);
  });

  it('a key pending review: doctor shows the status, the step and the next steps', async () => {
    const hub = await startDevHub({ token: TEST_KEY, pendingToken: 'sk-prov-pending-000000' });
    cleanup.push(() => hub.close());
    const h = home();
    writeConfigToml(h, { Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: 'sk-prov-pending-000000' }, Agent: { Discovery: false } });
    const r = await runCli(['doctor', '--home', h]);
    expect(r.code).toBe(1);
    // The dev hub's "pending" fixture (HUB-PROTOCOL.md's shape).
    expect(r.stdout).toContain('status: pending (step 1 of 4: Request approval)');
    expect(r.stdout).toContain('Wait for admin review');
  });

  it('no config: exit 2 with how to make one', async () => {
    const h = home();
    const r = await runCli(['doctor', '--home', h]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain(`swan-provider init --home "${h}"`);
  });
});
