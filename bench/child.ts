// Child processes of the bench: started with our node, awaited until they print their readiness line,
// stopped with SIGINT (then SIGKILL after a deadline). Their output is kept (bounded) for error messages.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** The first stdout line that matched `ready`. */
  readyLine: string;
  /** Last lines of output (stdout and stderr), for error messages. */
  tail(): string;
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
  /**
   * The loop probe's figures since the last call (bench/loop-probe.mjs, preloaded with --import): sends
   * SIGUSR2 and resolves with the JSON of the `loop-probe` line the process answers with.
   */
  probe(timeoutMs?: number): Promise<unknown>;
}

export interface StartOptions {
  name: string;
  args: string[];
  ready: RegExp;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
}

/** Starts `node <args>` in the repo root and resolves once a stdout line matches `ready`. */
export function startChild(o: StartOptions): Promise<Child> {
  const proc = spawn(process.execPath, o.args, { cwd: ROOT, env: o.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (text: string): void => {
    for (const l of text.split('\n')) if (l.trim()) lines.push(l);
    if (lines.length > 40) lines.splice(0, lines.length - 40);
  };
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const tail = (): string => lines.join('\n');
  // Whole stdout lines, for the loop probe's answers.
  const probeWaiters: Array<(json: unknown) => void> = [];
  let partial = '';
  proc.stdout?.on('data', (text: string) => {
    const parts = (partial + text).split('\n');
    partial = parts.pop() ?? '';
    for (const l of parts) if (l.startsWith('loop-probe ')) probeWaiters.shift()?.(JSON.parse(l.slice('loop-probe '.length)));
  });
  return new Promise<Child>((resolve, reject) => {
    let buffered = '';
    let ready = false;
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${o.name} did not start within ${o.timeoutMs ?? 30_000} ms. Its output:\n${tail()}`));
    }, o.timeoutMs ?? 30_000);
    proc.stderr?.setEncoding('utf8').on('data', keep);
    proc.stdout?.setEncoding('utf8').on('data', (text: string) => {
      keep(text);
      if (ready) return;
      buffered += text;
      const line = buffered.split('\n').find((l) => o.ready.test(l));
      if (!line) return;
      ready = true;
      buffered = '';
      clearTimeout(timer);
      resolve({
        name: o.name,
        proc,
        pid: proc.pid as number,
        readyLine: line,
        tail,
        probe: (timeoutMs = 5000) =>
          new Promise((res, rej) => {
            const timer = setTimeout(
              () => rej(new Error(`${o.name} did not answer the loop probe within ${timeoutMs} ms (started without --import ./bench/loop-probe.mjs?)`)),
              timeoutMs,
            );
            probeWaiters.push((json) => {
              clearTimeout(timer);
              res(json);
            });
            proc.kill('SIGUSR2');
          }),
        stop: async (timeoutMs = 10_000) => {
          if (proc.exitCode !== null || proc.signalCode !== null) return { ...(await exited), killed: false };
          proc.kill('SIGINT');
          let killed = false;
          const kill = setTimeout(() => {
            killed = true;
            proc.kill('SIGKILL');
          }, timeoutMs);
          const r = await exited;
          clearTimeout(kill);
          return { ...r, killed };
        },
      });
    });
    proc.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`${o.name} could not start: ${e.message}`));
    });
    void exited.then(({ code, signal }) => {
      if (ready) return;
      clearTimeout(timer);
      reject(new Error(`${o.name} exited (${code ?? signal}) before it was ready. Its output:\n${tail()}`));
    });
  });
}
