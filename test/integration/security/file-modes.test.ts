// The home folder is 0700 and every file the agent writes there is 0600 — new files, and existing ones
// a previous version left group/world-readable (fixed at start). Through a real Agent and the real CLI.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Agent } from '../../../src/core/agent';
import { ensureHome } from '../../../src/core/config/home';
import { memoryLog } from '../../../src/core/base/log';
import { repoRoot } from '../../support/traces';
import { until } from '../../support/stack';
import { runCli } from '../../support/cli/cli';
import { writeConfigToml } from '../../support/config-toml';

const mode = (p: string) => fs.statSync(p).mode & 0o777;
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});
function root(): string {
  const r = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-modes-'));
  roots.push(r);
  return r;
}

/** Every file directly in the home and in logs/, with its mode. */
function modes(home: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const dir of [home, path.join(home, 'logs')]) {
    if (!fs.existsSync(dir)) continue;
    for (const e of fs.readdirSync(dir, { withFileTypes: true }))
      if (e.isFile()) out[path.relative(home, path.join(dir, e.name))] = mode(path.join(dir, e.name));
  }
  return out;
}

describe('file modes', () => {
  it.skipIf(process.platform === 'win32')('ensureHome creates the home 0700 and tightens what an older version left readable', () => {
    const home = path.join(root(), 'a', 'home');
    ensureHome(home);
    expect(mode(home)).toBe(0o700);
    fs.chmodSync(home, 0o755);
    fs.mkdirSync(path.join(home, 'logs'), { mode: 0o755 });
    for (const f of ['settings.json', 'config.toml', 'models.json', 'ledger.sqlite', 'ledger.sqlite-wal', 'logs/agent.jsonl'])
      fs.writeFileSync(path.join(home, f), 'x', { mode: 0o644 });
    ensureHome(home);
    expect(mode(home)).toBe(0o700);
    expect(mode(path.join(home, 'logs'))).toBe(0o700);
    for (const [f, m] of Object.entries(modes(home))) expect(m, f).toBe(0o600);
  });

  it.skipIf(process.platform === 'win32')('a running agent writes settings, ledger (and its WAL), identity and log files 0600', async () => {
    const home = path.join(root(), 'home');
    fs.mkdirSync(home, { mode: 0o755 });
    fs.chmodSync(home, 0o755);
    fs.writeFileSync(path.join(home, 'models.json'), '{}', { mode: 0o644 });
    writeConfigToml(home, { API: { NodeName: 'm' }, Inference: { WebSocketURL: 'ws://127.0.0.1:9' }, Agent: { Discovery: false } }, { mode: 0o644 });
    const agent = await Agent.create({ home, log: memoryLog(), gpu: false, discovery: false, env: {} });
    try {
      await agent.start();
      expect(await agent.invoke('settings.save', { patch: { theme: 'dark' } })).toEqual({ ok: true });
      await agent.invoke('prices.set', { model: '*', inputPerM: 1, outputPerM: 2 });
      expect(mode(home)).toBe(0o700);
      const m = modes(home);
      expect(Object.keys(m)).toEqual(expect.arrayContaining(['settings.json', 'ledger.sqlite', 'config.toml', 'models.json']));
      for (const [f, v] of Object.entries(m)) expect(v, f).toBe(0o600);
    } finally {
      await agent.stop();
    }
  });

  it.skipIf(process.platform === 'win32')(
    '`swan-provider init` makes the home as run does: 0700, config.toml and models.json 0600 (also over old 0644 files)',
    async () => {
      const home = path.join(root(), 'init-home');
      const r = await runCli(['init', '--home', home, '--network', 'testnet']);
      expect(r.code, r.stderr).toBe(0);
      expect(mode(home)).toBe(0o700);
      expect(modes(home)).toEqual({ 'config.toml': 0o600, 'models.json': 0o600 });
      // --force over files an older version left 0644, and --dir: the same.
      fs.chmodSync(path.join(home, 'config.toml'), 0o644);
      expect((await runCli(['init', '--home', home, '--force'])).code).toBe(0);
      expect(mode(path.join(home, 'config.toml'))).toBe(0o600);
      const dir = path.join(root(), 'elsewhere');
      expect((await runCli(['init', '--home', home, '--dir', dir])).code).toBe(0);
      expect(mode(dir)).toBe(0o700);
      expect(modes(dir)).toEqual({ 'config.toml': 0o600, 'models.json': 0o600 });
    },
  );

  it.skipIf(process.platform === 'win32')('`swan-provider run` on a fresh home: 0700 folder, 0600 agent.jsonl and config', async () => {
    const home = path.join(root(), 'fresh');
    // The first-run config points at mainnet; the console's overlay names a closed local port instead, so
    // nothing here looks up the real network's hosts (the catalogue and rates are fetched without a key).
    fs.mkdirSync(home, { recursive: true });
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ hubUrl: 'ws://127.0.0.1:9', serviceUrl: 'http://127.0.0.1:9' }));
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'swan-provider.js'), 'run', '--home', home, '--init-if-missing', '--no-discovery'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => child.once('exit', r));
    try {
      await until(() => /agent running/.test(out), 'agent running', 20_000);
      expect(mode(home)).toBe(0o700);
      expect(mode(path.join(home, 'logs'))).toBe(0o700);
      const m = modes(home);
      // logs/agent.jsonl is a link to the rolled file in use (base/log-file.ts): that file is the one with a mode.
      expect(Object.keys(m)).toEqual(expect.arrayContaining(['logs/agent.1.jsonl', 'config.toml']));
      for (const [f, v] of Object.entries(m)) expect(v, f).toBe(0o600);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
