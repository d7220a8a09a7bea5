// The agent as users run it, for the conformance suites: `swan-provider run` as a child process, a temp home
// with a plain config.toml (defaults everywhere but what the test names), models.json, PATH = a stand-in tools
// folder only and HOME = a temp folder (the real ~/.swan is never read).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ConfigFile } from '../../../src/core/config/config';
import { writeConfigToml } from '../config-toml';
import type { FakeBin } from '../gpu/fake-tools';
import { repoRoot } from '../traces';
import type { GoHub } from './go-hub';

const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');

export interface RunningAgent {
  child: ChildProcess;
  home: string;
  userHome: string;
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  hub: GoHub;
  /** The provider key the hub accepts. */
  key: string;
  models: Record<string, Record<string, unknown>>;
  agent?: ConfigFile['Agent'];
  bin: FakeBin;
  /** A Go provider's raw private key placed in ~/.swan/computing. */
  goKey?: Buffer;
}

export function spawnAgent(o: SpawnOptions): RunningAgent {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-conf-'));
  const userHome = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-conf-user-'));
  if (o.goKey) {
    fs.mkdirSync(path.join(userHome, '.swan', 'computing'), { recursive: true });
    fs.writeFileSync(path.join(userHome, '.swan', 'computing', 'private_key'), o.goKey);
  }
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(o.models, null, 2));
  writeConfigToml(home, { API: { NodeName: 'conformance' }, Inference: { WebSocketURL: o.hub.wsUrl, ServiceURL: o.hub.url, ApiKey: o.key }, Agent: o.agent });
  const child = spawn(process.execPath, [BIN, 'run', '--home', home], {
    env: { PATH: o.bin.dir, HOME: userHome, LANG: 'C' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    home,
    userHome,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
      fs.rmSync(home, { recursive: true, force: true });
      fs.rmSync(userHome, { recursive: true, force: true });
    },
  };
}
