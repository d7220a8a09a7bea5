// Running a vendor tool (nvidia-smi, amd-smi, rocm-smi) as a child process, always with a deadline.
// A hung tool (driver reload, stuck GPU) must never hang the agent: on timeout the whole process
// group is killed (tools such as amd-smi are Python launchers with children of their own).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface ToolResult {
  /** Exit code 0 and not timed out. */
  ok: boolean;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Spawn failure (ENOENT, EACCES …): the tool never ran. */
  spawnError?: string;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Output beyond this many bytes per stream is dropped (a runaway tool must not eat memory). */
  maxBytes?: number;
}

const IS_WINDOWS = process.platform === 'win32';

/**
 * Finds an executable on the PATH of `env` (not of this process: tests point PATH at fake tools).
 * Returns its absolute path, or null when it is not installed.
 */
export function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  const pathVar = env.PATH ?? env.Path ?? '';
  const exts = IS_WINDOWS ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').map((e) => e.toLowerCase()) : [''];
  const dirs = pathVar.split(path.delimiter).filter(Boolean);
  if (IS_WINDOWS && name === 'nvidia-smi') {
    // Older Windows drivers install nvidia-smi outside PATH.
    dirs.push(path.join(env.ProgramFiles ?? 'C:\\Program Files', 'NVIDIA Corporation', 'NVSMI'));
  }
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    if (!IS_WINDOWS) fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Spawns a tool in its own process group (POSIX) so the group can be killed as one. */
export function spawnTool(file: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(file, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: !IS_WINDOWS,
    windowsHide: true,
  });
}

/** Kills the child and everything it started. Safe to call on a child that already exited. */
export function killTree(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (IS_WINDOWS) child.kill(signal);
    else process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Runs a tool to completion or until the deadline, whichever comes first. Never rejects. */
export function runTool(file: string, args: string[], opts: RunOptions): Promise<ToolResult> {
  const maxBytes = opts.maxBytes ?? 4 * 1024 * 1024;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawnTool(file, args, opts.env);
    } catch (err) {
      resolve({ ok: false, code: null, signal: null, stdout: '', stderr: '', timedOut: false, spawnError: String(err) });
      return;
    }
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let spawnError: string | undefined;
    let settled = false;

    child.stdout?.on('data', (b: Buffer) => {
      if (outBytes < maxBytes) out.push(b);
      outBytes += b.length;
    });
    child.stderr?.on('data', (b: Buffer) => {
      if (errBytes < maxBytes) errOut.push(b);
      errBytes += b.length;
    });

    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        ok: !timedOut && !spawnError && code === 0,
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(errOut).toString('utf8'),
        timedOut,
        ...(spawnError ? { spawnError } : {}),
      });
    };

    const timer = setTimeout(() => {
      timedOut = true;
      killTree(child);
      // A grandchild holding our pipes must not keep us waiting for 'close'.
      child.stdout?.destroy();
      child.stderr?.destroy();
      setTimeout(() => finish(child.exitCode, child.signalCode), 200).unref();
    }, opts.timeoutMs);

    child.on('error', (err: NodeJS.ErrnoException) => {
      spawnError = err.code ? `${err.code}: ${err.message}` : err.message;
      finish(null, null);
    });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** The meaningful lines of a failed tool's output (stdout first: nvidia-smi prints its errors there). */
export function toolMessage(res: Pick<ToolResult, 'stdout' | 'stderr' | 'spawnError'>, maxLines = 2): string {
  const lines = `${res.stdout}\n${res.stderr}`
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !/^\s*(return |.*Warning:)/.test(l));
  const text = lines.slice(0, maxLines).join(' ');
  return (text || res.spawnError || '').slice(0, 400);
}
