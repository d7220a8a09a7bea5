// The agent's CLI (`swan-provider run`) as a child process, the way a service manager runs it: in a home, without
// the key or hub this process's environment may name. What it printed is kept; `killAgents` ends any still running.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = path.join(root, 'bin', 'swan-provider.js');

export interface AgentChild {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr as they came. */
  output: () => string;
  stdout: () => string;
  stderr: () => string;
}

const children: ChildProcess[] = [];

/** Kills every agent still running: one that failed to stop is not left behind. Call it before unmounting its disk. */
export function killAgents(): void {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** `swan-provider run --home <home>` and `args` (default: its config.toml, discovery off). */
export function startAgent(home: string, args: string[] = ['--config', path.join(home, 'config.toml'), '--no-discovery']): AgentChild {
  const env = { ...process.env };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  const child = spawn(process.execPath, [CLI, 'run', '--home', home, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let all = '';
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => {
    all += d.toString();
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    all += d.toString();
    err += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, output: () => all, stdout: () => out, stderr: () => err };
}
