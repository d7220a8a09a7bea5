// One managed engine's life: started, waited for until it answers, watched, restarted after a crash with
// backoff (each restart said in the log and shown in the console), stopped on request. What it runs comes
// from a launcher (a llama-server child process, or a container), so the policy is written once.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import type { Logger } from '../base/log';
import { fetchEngine } from '../engine-client/http';
import { ServeError, type ServeSpec } from './spec';

export type ManagedPhase = 'starting' | 'serving' | 'restarting' | 'failed' | 'stopped';

/** Something started: settles `exited` with how it ended; `stop` ends it and resolves once it has. */
export interface Running {
  pid?: number;
  /** How it ended: "exit code 1", "signal SIGKILL", "could not start: …". */
  exited: Promise<string>;
  stop(): Promise<void>;
}

export interface Launch {
  /** Base URL on 127.0.0.1 (no /v1). */
  url: string;
  port: number;
  /** Starts the engine once; `line` gets each line it logs. Throws ServeError when it cannot be started at all. */
  start(line: (text: string) => void): Promise<Running>;
  /** What runs, as a command line (the log, `models ps`). */
  describe: string;
}

export interface EngineProcessOptions {
  spec: ServeSpec;
  /** A new launch for each attempt (a new free port when the last one never answered). */
  launch: (attempt: { fresh: boolean }) => Launch;
  log: Logger;
  /** Phase, URL or pid changed. */
  changed: () => void;
  /** The first wait between restarts; doubles per consecutive failure up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long a start may take before it counts as failed (a large model loads for minutes). */
  readyTimeoutMs?: number;
  /** Starts that fail in a row, never answering, before the engine is left failed (a bad flag, a bad file). */
  maxFailedStarts?: number;
  /** Readiness check: resolves true once the engine answers (default GET /health → 200). */
  ready?: (url: string, signal: AbortSignal) => Promise<boolean>;
}

/** How long an engine must serve before a crash counts as a first failure again (the backoff resets). */
const STABLE_MS = 60_000;
const READY_POLL_MS = 100;
/** The last lines an engine logged, kept to say why a start failed. */
const TAIL_LINES = 20;
const MAX_LINE = 2000;

/** Whether the engine answers its health route (through the one engine HTTP client: bounded, never throws). */
async function healthAnswers(url: string, signal: AbortSignal): Promise<boolean> {
  const r = await fetchEngine({ url, path: '/health', signal, timeoutMs: 2000, maxBytes: 64 * 1024 });
  return r.status === 200;
}

/** Runs a child process, its stdout and stderr read line by line. */
export function spawnChild(binary: string, args: string[], env: NodeJS.ProcessEnv, line: (text: string) => void): Running {
  const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const s of [child.stdout, child.stderr]) readline.createInterface({ input: s, crlfDelay: Infinity }).on('line', line);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`));
    child.once('error', (e) => resolve(`could not start: ${e.message}`));
  });
  let done = false;
  void exited.then(() => (done = true));
  return {
    ...(child.pid !== undefined ? { pid: child.pid } : {}),
    exited,
    stop: async () => {
      if (done) return;
      child.kill('SIGTERM');
      // A server that does not end on SIGTERM within 10 s is killed.
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

export class EngineProcess {
  phase: ManagedPhase = 'starting';
  url = '';
  port = 0;
  pid?: number;
  describe = '';
  /** Restarts after a crash since the agent started it. */
  restarts = 0;
  lastError?: string;
  /** Stable code of the last failure (start_failed, llama_server_missing…). */
  lastCode?: string;
  servingSince?: number;
  nextRestartAt?: number;
  /** Whether it has answered at least once (its model is announced from then on, down while it restarts). */
  everServed = false;
  private failures = 0;
  private stopping = false;
  private running?: Running;
  private wake?: () => void;
  private readonly abort = new AbortController();
  private readonly tail: string[] = [];
  private loop?: Promise<void>;

  constructor(private readonly o: EngineProcessOptions) {}

  get spec(): ServeSpec {
    return this.o.spec;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops it (and any restart pending) and resolves once the engine has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.wake?.();
    await this.running?.stop();
    await this.loop;
    this.phase = 'stopped';
    this.pid = undefined;
    this.o.changed();
  }

  private set(phase: ManagedPhase): void {
    this.phase = phase;
    this.o.changed();
  }

  private onLine(text: string): void {
    const t = text.length > MAX_LINE ? `${text.slice(0, MAX_LINE)}…` : text;
    this.tail.push(t);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
    // Its own words at debug once it serves (a line per request); trouble and the start at info or above.
    if (/\b(error|failed|fatal|abort)/i.test(t)) this.o.log.warn(t);
    else if (this.phase === 'serving') this.o.log.debug(t);
    else this.o.log.info(t);
  }

  private async run(): Promise<void> {
    let fresh = true;
    while (!this.stopping) {
      const launch = this.o.launch({ fresh });
      this.set(this.restarts === 0 && !this.everServed ? 'starting' : 'restarting');
      let running: Running;
      try {
        running = await launch.start((l) => this.onLine(l));
        Object.assign(this, { url: launch.url, port: launch.port, describe: launch.describe });
      } catch (e) {
        // It cannot be started at all (no program, no Docker): left failed with why; a new spec tries again.
        this.lastCode = e instanceof ServeError ? e.code : 'start_failed';
        this.lastError = (e as Error).message;
        this.o.log.error(`${this.spec.id}: ${this.lastError}`);
        this.set('failed');
        return;
      }
      this.running = running;
      this.pid = running.pid;
      this.o.changed();
      this.o.log.info(`${this.spec.id}: started ${launch.describe}${running.pid ? ` (pid ${running.pid})` : ''}; waiting until it answers at ${launch.url}`);
      let exited: string | undefined;
      void running.exited.then((how) => (exited = how));
      const served = await this.waitReady(launch.url, () => exited !== undefined);
      if (served) {
        this.everServed = true;
        this.servingSince = Date.now();
        this.lastError = undefined;
        this.lastCode = undefined;
        this.o.log.info(
          `${this.spec.id}: serving at ${launch.url}${this.restarts ? ` again after ${this.restarts} restart${this.restarts === 1 ? '' : 's'}` : ''}`,
        );
        this.set('serving');
      } else if (exited === undefined && !this.stopping) {
        this.o.log.warn(`${this.spec.id}: no answer at ${launch.url}/health within ${Math.round((this.o.readyTimeoutMs ?? 600_000) / 1000)} s; stopping it`);
        await running.stop();
      }
      const how = await running.exited;
      this.running = undefined;
      this.pid = undefined;
      if (this.stopping) return;
      const stable = served && this.servingSince !== undefined && Date.now() - this.servingSince >= STABLE_MS;
      this.failures = stable ? 1 : this.failures + 1;
      fresh = !served;
      if (!served && this.failures >= (this.o.maxFailedStarts ?? 5)) {
        this.lastCode = 'start_failed';
        this.lastError = `${this.spec.backend} ended before it answered, ${this.failures} times in a row (last: ${how}). Its last lines: ${this.tail.slice(-5).join(' | ') || '(none)'}`;
        this.o.log.error(`${this.spec.id}: ${this.lastError}. Not restarting: fix the cause and serve it again.`);
        this.set('failed');
        return;
      }
      const wait = Math.min((this.o.backoffMs ?? 1000) * 2 ** (this.failures - 1), this.o.maxBackoffMs ?? 60_000);
      this.restarts++;
      this.lastCode = 'engine_crashed';
      this.lastError = `${this.spec.backend} ended (${how})`;
      this.nextRestartAt = Date.now() + wait;
      this.o.log.warn(`${this.spec.id}: ${this.lastError}; restarting in ${(wait / 1000).toFixed(1)} s (restart ${this.restarts})`);
      this.set('restarting');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
      this.nextRestartAt = undefined;
    }
  }

  /** Polls until the engine answers; false when it ended, the agent stopped it, or it took too long. */
  private async waitReady(url: string, ended: () => boolean): Promise<boolean> {
    const deadline = Date.now() + (this.o.readyTimeoutMs ?? 600_000);
    const ready = this.o.ready ?? healthAnswers;
    while (!this.stopping && !ended() && Date.now() < deadline) {
      if (await ready(url, this.abort.signal)) return !ended();
      await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
    return false;
  }
}
