// Running `swan-provider` as users do (a child process of bin/swan-provider.js) in the CLI tests.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { repoRoot } from '../traces';
import { until } from '../stack';

export const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');

/**
 * Tests never reach the real Swan Inference hosts: before a first run (whose config.toml points at
 * mainnet) the home gets the console's own overlay, settings.json, naming a closed local port instead.
 * config.toml itself stays the first-run file the test checks.
 */
export function offlineHome(home: string): string {
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ hubUrl: 'ws://127.0.0.1:9', serviceUrl: 'http://127.0.0.1:9' }));
  return home;
}

/** The environment of a user with none of our variables set, plus `env`. */
export function cleanEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of ['SWAN_HOME', 'INFERENCE_API_KEY', 'INFERENCE_WS_URL']) delete base[k];
  return { ...base, ...env };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 30_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** A long-running command (run, demo): its output so far, a wait for a line, and a clean stop. */
export class CliProcess {
  out = '';
  err = '';
  readonly exited: Promise<number | null>;
  constructor(readonly child: ChildProcessByStdio<null, Readable, Readable>) {
    child.stdout.on('data', (d: Buffer) => (this.out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (this.err += d.toString()));
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(args: string[], env: NodeJS.ProcessEnv = {}): CliProcess {
    return new CliProcess(spawn(process.execPath, [BIN, ...args], { env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  async line(re: RegExp, what: string, timeoutMs = 20_000): Promise<RegExpExecArray> {
    await until(() => re.test(this.out) || this.child.exitCode !== null, what, timeoutMs);
    const m = re.exec(this.out);
    if (!m) throw new Error(`${what}: the command exited (${this.child.exitCode}) first:\n${this.out}\n${this.err}`);
    return m;
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}
