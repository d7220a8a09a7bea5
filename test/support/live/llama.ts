// Helpers of the live engine suite: the real llama-server of ../shared/engines/llama.cpp, the
// `swan-provider` command as child processes, and the console bridge over its WebSocket.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { repoRoot } from '../traces';
import { tempHome, TEST_KEY, until } from '../stack';
import { writeConfigToml } from '../config-toml';

const SHARED_LLAMA = path.resolve(repoRoot, '..', 'shared', 'engines', 'llama.cpp');
// Resolved: start.sh starts the server on its real path (readlink -f), and the engine reports that path.
export const LLAMA_DIR = fs.existsSync(SHARED_LLAMA) ? fs.realpathSync(SHARED_LLAMA) : SHARED_LLAMA;
export const LLAMA_PRESENT = fs.existsSync(path.join(LLAMA_DIR, 'start.sh')) && fs.existsSync(path.join(LLAMA_DIR, 'bin', 'llama-server'));
export const TINY = path.join(LLAMA_DIR, 'models', 'tiny.gguf');
export const SMALL = path.join(LLAMA_DIR, 'models', 'small.gguf');
const BIN = path.join(repoRoot, 'bin', 'swan-provider.js');
/** The environment of an owner's install: llama-server on PATH, its libgomp on LD_LIBRARY_PATH. */
export const LLAMA_ENV = { PATH: `${path.join(LLAMA_DIR, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`, LD_LIBRARY_PATH: path.join(LLAMA_DIR, 'lib') };

/**
 * A home for the `swan-provider` CLI on a dev hub, as the managed-engine walks start from: an empty models.json,
 * discovery off (only what the app starts is served), quick heartbeats and health checks, no deep checks.
 */
export function managedHome(prefix: string, nodeName: string, hub: { wsUrl: string; url: string }): string {
  const home = tempHome(prefix);
  fs.writeFileSync(path.join(home, 'models.json'), '{}');
  writeConfigToml(home, {
    API: { NodeName: nodeName },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: TEST_KEY },
    Agent: { HeartbeatIntervalSeconds: 0.5, HealthCheckIntervalSeconds: 0.5, Discovery: false, DeepHealthCheckEvery: 0 },
  });
  return home;
}

/** GET a URL; status 0 when nothing answers. */
export async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  try {
    const r = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
    return { status: r.status, body: await r.text() };
  } catch {
    return { status: 0, body: '' };
  }
}

/** One llama-server process (start.sh execs it, so the child's pid is the server's). */
export class Llama {
  readonly url: string;
  private proc?: ChildProcess;
  private exited?: Promise<void>;
  log = '';

  constructor(
    readonly port: number,
    readonly args: string[] = [],
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts it; with wait, resolves once GET /health answers 200. */
  async start(wait = true): Promise<void> {
    const proc = spawn(path.join(LLAMA_DIR, 'start.sh'), ['--port', String(this.port), ...this.args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    proc.stdout?.on('data', (d: Buffer) => (this.log += d.toString()));
    proc.stderr?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    if (wait) await this.ready();
  }

  async ready(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if ((await get(`${this.url}/health`)).status === 200) return;
      if (this.proc?.exitCode !== null && this.proc?.exitCode !== undefined) throw new Error(`llama-server on ${this.port} exited: ${this.log.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`llama-server on ${this.port} not ready in ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Sends a signal without waiting (SIGSTOP freezes it: the kernel still accepts connections; SIGCONT thaws it). */
  signal(sig: NodeJS.Signals): void {
    this.proc?.kill(sig);
  }

  /** Kills it (SIGKILL: an engine that dies, not one that shuts down) and waits for the exit. */
  async kill(): Promise<void> {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGKILL');
    await this.exited;
  }
}

/** A `swan-provider` child process with its output collected. */
export class Cli {
  out = '';
  err = '';
  readonly proc: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    this.proc = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc.stdout?.on('data', (d: Buffer) => (this.out += d.toString()));
    this.proc.stderr?.on('data', (d: Buffer) => (this.err += d.toString()));
    this.exited = new Promise((resolve) => this.proc.once('exit', (code) => resolve(code)));
  }

  async waitFor(re: RegExp, what: string, timeoutMs = 30_000): Promise<RegExpExecArray> {
    await until(() => re.test(this.out) || this.proc.exitCode !== null, what, timeoutMs);
    const m = re.exec(this.out);
    if (!m) throw new Error(`${what}: the command exited (${this.proc.exitCode}): ${this.err.slice(-2000)}`);
    return m;
  }

  async stop(): Promise<number | null> {
    if (this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGTERM');
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}

/** Runs a `swan-provider` command to its end. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; out: string; err: string }> {
  const c = new Cli(args, env);
  const code = await c.exited;
  return { code, out: c.out, err: c.err };
}

/** The console's bridge over its WebSocket: what the browser console sees. */
export class Bridge {
  private next = 1;
  private readonly waiting = new Map<number, (reply: { ok: boolean; value?: unknown; error?: string }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as { id?: number; reply?: { ok: boolean; value?: unknown; error?: string } };
      if (typeof m.id === 'number' && m.reply) this.waiting.get(m.id)?.(m.reply);
    });
  }

  /**
   * From the link `swan-provider run --console` printed (http://host:port/?code=…, a one-time code): the
   * code is exchanged for the session cookie as a browser does, the page secret read from the redirect's
   * fragment as the console's page does, and the bridge opened with both.
   */
  static async open(consoleUrl: string): Promise<Bridge> {
    const u = new URL(consoleUrl);
    const res = await fetch(consoleUrl, { redirect: 'manual' });
    const cookie = res.headers.get('set-cookie')?.split(';')[0];
    if (!cookie) throw new Error(`the console link gave no session cookie (HTTP ${res.status})`);
    const origin = `http://${u.host}`;
    const page = res.headers.get('location')?.split('#swan-page=')[1];
    if (!page) throw new Error(`the console's sign-in redirect carried no page secret (HTTP ${res.status})`);
    const ws = new WebSocket(`ws://${u.host}/bridge`, ['swan-bridge', `swan-page.${page}`], { headers: { cookie, origin } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new Bridge(ws);
  }

  async invoke<T>(channel: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    const reply = await new Promise<{ ok: boolean; value?: unknown; error?: string }>((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ id, channel, args }));
    });
    this.waiting.delete(id);
    if (!reply.ok) throw new Error(`${channel}: ${reply.error}`);
    return reply.value as T;
  }

  close(): void {
    this.ws.close();
  }
}

/** Polls an async condition (every 50 ms) until it holds. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
