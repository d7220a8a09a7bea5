// ManagedEngines: the one supervisor of the engines this agent runs for the owner. It keeps what runs in
// step with <home>/managed-engines.json (what `models serve`, `models stop` and the console ask for), and
// records what it started in <home>/managed-state.json (0600): pid, port, program. It stops only what it
// started: its own children, and, after an agent that died without stopping them, the processes that file
// names whose command line is still the one it started (checked in /proc; where that cannot be checked, they
// are left running and named in the log). The engines it runs are offered to the model registry as entries
// (catalogue id → 127.0.0.1 endpoint, key), once each has answered.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { z } from 'zod';
import type { ManagedEngineView } from '../../shared/views/managed';
import type { Logger } from '../base/log';
import type { ModelEntry } from '../config/config';
import { writeJsonAtomic } from '../config/atomic-file';
import { homePath } from '../config/home-layout';
import { EngineProcess, spawnChild, type Launch } from './engine-process';
import { commandLine, findLlamaServer, llamaCommand } from './llama-server';
import { addDesired, desiredFile, removeDesired, sameSpec, ServeError, type ServeSpec } from './spec';
import type { ContainerEngines } from './containers';
import { processAlive } from '../base/process-alive';

/** How often the wish file is looked at for changes (a stat; read only when it changed). */
const WATCH_MS = 500;

/** managed-state.json: the agent that wrote it, and each engine it runs as the console shows it, with the program. */
export const managedStateSchema = z.object({
  agentPid: z.number().int(),
  /** Whether that agent was running when it wrote the file (false: written as it stopped). */
  running: z.boolean().default(false),
  engines: z
    .array(
      z.object({ id: z.string(), pid: z.number().int().optional(), port: z.number().int(), binary: z.string(), phase: z.string().optional() }).passthrough(),
    )
    .max(64),
});
export type ManagedStateFile = z.infer<typeof managedStateSchema>;
type StateFile = ManagedStateFile;

/** What the home's managed-state.json says, and whether the agent that wrote it still runs. */
export function readManagedState(home: string): { state?: ManagedStateFile; agentRunning: boolean } {
  try {
    const state = managedStateSchema.parse(JSON.parse(fs.readFileSync(homePath(home, 'managedState'), 'utf8')));
    return { state, agentRunning: state.running && processAlive(state.agentPid) };
  } catch {
    return { agentRunning: false };
  }
}

export interface ManagedOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** [Agent] LlamaServer: the llama-server to run when a spec names none. */
  llamaServer?: string;
  /** Values the log must never show (each engine's key). */
  secrets: (values: string[]) => void;
  /** What the engines serve or where changed: the model set and the console follow. */
  changed: () => void;
  /** vLLM and SGLang containers (Docker); without it those specs fail with docker_unavailable. */
  containers?: ContainerEngines;
  backoffMs?: number;
  readyTimeoutMs?: number;
}

/** A port nothing listens on right now on 127.0.0.1. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Whether the process `pid` is still the llama-server started for `id` (its command line, Linux /proc). */
function stillOurs(pid: number, binary: string, id: string): boolean | undefined {
  try {
    const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv[0] === binary && argv.some((a, i) => a === '--alias' && argv[i + 1] === id);
  } catch {
    return process.platform === 'linux' ? false : undefined;
  }
}

export class ManagedEngines {
  private readonly engines = new Map<string, EngineProcess>();
  private readonly wish;
  private readonly stateFile: string;
  private timer?: NodeJS.Timeout;
  private reconciling: Promise<void> = Promise.resolve();
  private closed = false;
  /** Paused with [Agent] PauseFreesGpu: every engine stopped (the wishes kept) until resumed. */
  private suspended = false;
  /** Engines stopped while a GPU they run on is paused (the wishes kept): started again when released. */
  private held = new Set<string>();
  /** Engines on their way out (a held one is shown as stopped only once its process has ended). */
  private readonly stopping = new Set<string>();
  /** What the wish file asked for when last read. */
  private wanted: ServeSpec[] = [];

  constructor(private readonly o: ManagedOptions) {
    this.wish = desiredFile(o.home);
    this.stateFile = homePath(o.home, 'managedState');
  }

  /** Stops what a previous agent left running, starts what the file asks for, and watches it. */
  async start(): Promise<void> {
    await this.reapOrphans();
    this.writeState();
    this.reconcile(true);
    this.timer = setInterval(() => this.reconcile(false), WATCH_MS);
    this.timer.unref();
  }

  /** Stops every engine this agent started (in parallel), and the watch. */
  async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.reconciling;
    await Promise.all([...this.engines.values()].map((e) => e.stop()));
    this.engines.clear();
    this.writeState();
  }

  /** Looks at the wish file now (the console just wrote it) and acts on it. */
  reload(): Promise<void> {
    this.reconcile(true);
    return this.reconciling;
  }

  /**
   * Pausing frees the GPU ([Agent] PauseFreesGpu): every engine is stopped, its wish kept, and started again on
   * resume. Resolves once they have ended (or the reconcile on resume has begun).
   */
  async setSuspended(suspended: boolean): Promise<void> {
    if (suspended === this.suspended || this.closed) return;
    this.suspended = suspended;
    this.o.log.info(
      suspended
        ? 'paused: stopping the engines this agent runs, to free the GPU ([Agent] PauseFreesGpu)'
        : 'resumed: starting the engines this agent runs again',
    );
    if (suspended) {
      await this.reconciling;
      await Promise.all([...this.engines.values()].map((e) => e.stop()));
      this.writeState();
      this.o.changed();
    } else await this.reload();
  }

  /**
   * Holds these engines (a GPU they run on is paused: engines/gpu-placement.ts) and releases the rest: a held
   * engine is stopped, its wish kept, and started again once released.
   */
  async setHeld(ids: ReadonlySet<string>): Promise<void> {
    if (this.closed) return;
    const before = this.held;
    this.held = new Set(ids);
    const released = [...before].filter((id) => !this.held.has(id));
    const newly = [...this.held].filter((id) => !before.has(id));
    if (released.length === 0 && newly.length === 0) return;
    for (const id of newly) if (this.engines.has(id)) this.o.log.info(`${id}: stopping it while its GPU is paused, to free the GPU's memory`);
    for (const id of released) this.o.log.info(`${id}: its GPU serves again; starting it`);
    await this.reload();
  }

  /** The serve requests as last read from the wish file (held and suspended ones among them). */
  specs(): ServeSpec[] {
    return this.wanted.map((s) => ({ ...s }));
  }

  /** Records a serve request (as `models serve` does) and acts on it now. */
  async serve(spec: ServeSpec): Promise<void> {
    addDesired(this.o.home, spec);
    await this.reload();
  }

  /** Forgets a serve request and stops its engine; false when this agent was not asked to run `id`. */
  async remove(id: string): Promise<boolean> {
    const known = removeDesired(this.o.home, id) || this.engines.has(id);
    await this.reload();
    return known;
  }

  /** Registry entries of the engines that have answered: catalogue id → endpoint and key. */
  entries(): Record<string, ModelEntry> {
    const out: Record<string, ModelEntry> = {};
    for (const e of this.engines.values()) {
      if (!e.everServed || e.phase === 'stopped' || e.phase === 'failed') continue;
      out[e.spec.id] = {
        endpoint: e.url,
        api_key: this.keyOf(e.spec.id),
        ...(e.spec.contextLength ? { context_length: e.spec.contextLength } : {}),
        ...(e.spec.backend === 'llamacpp' ? { format: 'gguf' } : {}),
      };
    }
    return out;
  }

  /** Base URLs of the engines running now (discovery reads what they report). */
  urls(): string[] {
    return [...this.engines.values()].filter((e) => e.url && e.phase !== 'stopped').map((e) => e.url);
  }

  view(): ManagedEngineView[] {
    const heldRows: ManagedEngineView[] = this.wanted
      .filter((s) => this.held.has(s.id) && !this.engines.has(s.id) && !this.stopping.has(s.id))
      .map((s) => ({
        id: s.id,
        backend: s.backend,
        phase: 'stopped',
        ...(s.weights ? { weights: s.weights } : {}),
        ...(s.gpus ? { gpus: s.gpus } : {}),
        restarts: 0,
        held: true,
        command: '',
      }));
    return [...this.engines.values()]
      .map((e): ManagedEngineView => ({
        id: e.spec.id,
        backend: e.spec.backend,
        phase: e.phase,
        ...(e.url ? { url: e.url } : {}),
        ...(e.pid !== undefined ? { pid: e.pid } : {}),
        ...(e.spec.weights ? { weights: e.spec.weights } : {}),
        ...(e.spec.gpus ? { gpus: e.spec.gpus } : {}),
        ...(e.spec.contextLength ? { contextLength: e.spec.contextLength } : {}),
        ...(e.spec.slots ? { slots: e.spec.slots } : {}),
        restarts: e.restarts,
        ...(e.lastError ? { lastError: e.lastError } : {}),
        ...(e.lastCode ? { code: e.lastCode } : {}),
        ...(e.servingSince ? { servingSince: e.servingSince } : {}),
        ...(e.nextRestartAt ? { nextRestartAt: e.nextRestartAt } : {}),
        ...(this.held.has(e.spec.id) ? { held: true } : {}),
        command: e.describe,
      }))
      .concat(heldRows);
  }

  private readonly keys = new Map<string, string>();
  /** One random key per engine, for as long as this agent runs it (restarts keep it). */
  private keyOf(id: string): string {
    let k = this.keys.get(id);
    if (!k) {
      k = `sk-managed-${crypto.randomBytes(18).toString('base64url')}`;
      this.keys.set(id, k);
      this.o.secrets([k]);
    }
    return k;
  }

  private reconcile(force: boolean): void {
    if (this.closed) return;
    const { value, changed } = this.wish.read();
    if (!changed && !force) return;
    this.wanted = value.engines;
    this.reconciling = this.reconciling
      .then(() => this.apply(value.engines))
      .catch((e: unknown) => this.o.log.error(`managed engines: ${(e as Error).message}`));
  }

  private async apply(all: ServeSpec[]): Promise<void> {
    if (this.closed || this.suspended) return;
    const wanted = all.filter((s) => !this.held.has(s.id));
    const byId = new Map(wanted.map((s) => [s.id, s]));
    for (const [id, e] of [...this.engines]) {
      const want = byId.get(id);
      if (want && sameSpec(want, e.spec) && e.phase !== 'failed' && e.phase !== 'stopped') continue;
      if (!(want && e.phase === 'stopped') && !this.held.has(id))
        this.o.log.info(`${id}: ${want ? 'serve settings changed; restarting it' : 'stopping it (no longer asked for)'}`);
      this.engines.delete(id);
      this.stopping.add(id);
      await e.stop().finally(() => this.stopping.delete(id));
      this.writeState();
    }
    for (const spec of wanted) {
      if (this.engines.has(spec.id)) continue;
      const e = this.create(spec);
      this.engines.set(spec.id, e);
      e.start();
    }
    this.o.changed();
  }

  private create(spec: ServeSpec): EngineProcess {
    const log = this.o.log.child(`engine ${spec.id}`);
    let port = 0;
    const apiKey = this.keyOf(spec.id);
    const e: EngineProcess = new EngineProcess({
      spec,
      log,
      changed: () => {
        this.writeState();
        this.o.changed();
      },
      ...(this.o.backoffMs !== undefined ? { backoffMs: this.o.backoffMs } : {}),
      ...(this.o.readyTimeoutMs !== undefined ? { readyTimeoutMs: this.o.readyTimeoutMs } : {}),
      launch: ({ fresh }): Launch => {
        const describe = (p: number) =>
          spec.backend === 'llamacpp'
            ? commandLine(llamaCommand(spec, { binary: this.binaryFor(spec) ?? 'llama-server', port: p, apiKey }))
            : `${spec.backend} container ${spec.id}`;
        const launch: Launch = {
          url: '',
          port: 0,
          describe: '',
          start: async (line) => {
            // The port is kept across restarts (the registry's endpoint stays), renewed when a start never answered.
            if (spec.port) port = spec.port;
            else if (fresh || port === 0) port = await freeLoopbackPort();
            Object.assign(launch, { url: `http://127.0.0.1:${port}`, port, describe: describe(port) });
            if (spec.backend !== 'llamacpp') {
              if (!this.o.containers)
                throw new ServeError('docker_unavailable', `${spec.backend} runs in a Docker container, and this agent has no Docker to use.`);
              return this.o.containers.start(spec, { port, apiKey, line });
            }
            const binary = findLlamaServer({
              ...(spec.binary ? { spec: spec.binary } : {}),
              ...(this.o.llamaServer ? { configured: this.o.llamaServer } : {}),
              env: this.o.env,
            });
            if (spec.weights && !fs.existsSync(spec.weights))
              throw new ServeError(
                'weights_missing',
                `The weights file ${spec.weights} does not exist: download it first, or serve it again with --weights naming the file.`,
              );
            const cmd = llamaCommand(spec, { binary, port, apiKey });
            return spawnChild(cmd.binary, cmd.args, { ...this.o.env, ...cmd.env }, line);
          },
        };
        return launch;
      },
    });
    return e;
  }

  private binaryFor(spec: ServeSpec): string | undefined {
    try {
      return findLlamaServer({
        ...(spec.binary ? { spec: spec.binary } : {}),
        ...(this.o.llamaServer ? { configured: this.o.llamaServer } : {}),
        env: this.o.env,
      });
    } catch {
      return undefined;
    }
  }

  private writeState(): void {
    const views = new Map(this.view().map((v) => [v.id, v]));
    const state: StateFile = {
      agentPid: process.pid,
      running: !this.closed,
      engines: [...this.engines.values()].map((e) => ({ ...views.get(e.spec.id), id: e.spec.id, port: e.port, binary: this.binaryFor(e.spec) ?? '' })),
    };
    try {
      writeJsonAtomic(this.stateFile, state);
    } catch (err) {
      this.o.log.warn(`could not write ${this.stateFile}: ${(err as Error).message}`);
    }
  }

  /** After an agent that died without stopping its engines: stops those that are still the ones it started. */
  private async reapOrphans(): Promise<void> {
    let state: StateFile;
    try {
      state = managedStateSchema.parse(JSON.parse(fs.readFileSync(this.stateFile, 'utf8')));
    } catch {
      return;
    }
    if (state.running && state.agentPid !== process.pid && processAlive(state.agentPid)) {
      this.o.log.warn(`another agent (pid ${state.agentPid}) runs the managed engines of this home; leaving them alone`);
      return;
    }
    for (const o of state.engines) {
      if (o.pid === undefined || !processAlive(o.pid)) continue;
      const ours = stillOurs(o.pid, o.binary, o.id);
      if (ours === undefined) {
        this.o.log.warn(
          `${o.id}: pid ${o.pid} may be the engine a previous agent started; this system cannot confirm it, so it is left running (stop it yourself if it is)`,
        );
        continue;
      }
      if (!ours) continue;
      this.o.log.info(`${o.id}: stopping the engine a previous agent left running (pid ${o.pid})`);
      process.kill(o.pid, 'SIGTERM');
      const until = Date.now() + 10_000;
      while (processAlive(o.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      if (processAlive(o.pid)) process.kill(o.pid, 'SIGKILL');
    }
    this.writeState();
  }
}
