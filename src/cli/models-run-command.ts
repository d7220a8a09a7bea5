// `swan-provider models serve | stop | ps`: the engines the agent runs for the owner, as the Go provider's
// `models serve` / `models stop` / `models ps` (cmd/computing-provider/models_serve.go). The wish is
// recorded in the home (managed-engines.json), so these work whether or not an agent runs: a running agent
// sees the change within a second and acts on it (this command then follows it until the engine answers);
// an agent started later starts what the file names. What runs is read from managed-state.json, which the
// agent writes.
import fs from 'node:fs';
import path from 'node:path';
import { forTerminal } from '../core/base/terminal';
import { loadConfig } from '../core/config/config';
import { homePath } from '../core/config/home-layout';
import { containerConfig, dockerRunArgs } from '../core/managed/docker';
import { commandLine, findLlamaServer, llamaCommand } from '../core/managed/llama-server';
import { downloadedWeights, modelsDirOf } from '../core/downloads/models-dir';
import { addDesired, backendOf, desiredFile, parseServeSpec, removeDesired, ServeError, type ServeSpec } from '../core/managed/spec';
import { readManagedState, type ManagedStateFile } from '../core/managed/supervisor';

export interface ServeOptions {
  home: string;
  id: string;
  passthrough: string[];
  backend?: string;
  weights?: string;
  gpus?: string;
  contextLength?: string;
  slots?: string;
  port?: string;
  llamaServer?: string;
  image?: string;
  dryRun?: boolean;
  /** Seconds to follow a running agent until the engine answers (0: do not wait). */
  wait?: string;
}

const out = (s: string) => process.stdout.write(`${forTerminal(s)}\n`);
const err = (s: string) => process.stderr.write(`${forTerminal(s)}\n`);

function int(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new ServeError('bad_model_id', `${what} must be a whole number, not "${v}"`);
  return Number(v);
}

/** [Agent] LlamaServer from the home's config.toml, when there is one. */
function configuredLlamaServer(home: string): string | undefined {
  try {
    return loadConfig(homePath(home, 'config'), {}).agent.llamaServer || undefined;
  } catch {
    return undefined;
  }
}

function specOf(o: ServeOptions): ServeSpec {
  const backend = backendOf(o.backend ?? 'llamacpp');
  if (!backend) throw new ServeError('bad_model_id', `--backend ${o.backend}: use llamacpp, vllm or sglang`);
  const n = (v: string | undefined, what: string) => int(v, what);
  const contextLength = n(o.contextLength, '--context-length');
  const slots = n(o.slots, '--slots');
  const port = n(o.port, '--port');
  // No --weights: a model `models download` fetched into the models folder is served from there.
  const weights = o.weights ? path.resolve(o.weights) : downloadedWeights(modelsDirOf(o.home), o.id, backend);
  return parseServeSpec({
    id: o.id,
    backend,
    ...(weights ? { weights } : {}),
    ...(o.gpus ? { gpus: o.gpus } : {}),
    ...(contextLength !== undefined ? { contextLength } : {}),
    ...(slots !== undefined ? { slots } : {}),
    ...(port !== undefined ? { port } : {}),
    ...(o.llamaServer ? { binary: path.resolve(o.llamaServer) } : {}),
    ...(o.image ? { image: o.image } : {}),
    args: o.passthrough,
    addedAt: Date.now(),
  });
}

/** The command the agent would run for `spec` (a free port stands for the one it picks). */
function dryRun(spec: ServeSpec, home: string): string {
  const port = spec.port ?? 30000;
  if (spec.backend === 'llamacpp') {
    let binary: string;
    try {
      binary = findLlamaServer({
        ...(spec.binary ? { spec: spec.binary } : {}),
        ...(configuredLlamaServer(home) ? { configured: configuredLlamaServer(home) } : {}),
        env: process.env,
      });
    } catch {
      binary = 'llama-server';
    }
    return commandLine(llamaCommand(spec, { binary, port, apiKey: '<key>' }));
  }
  return commandLine({ binary: 'docker', args: dockerRunArgs(containerConfig(spec, { hostPort: port, apiKey: '<key>' })) });
}

/** Checks what can be checked before the wish is recorded, so a serve that cannot start says so now. */
function preflight(spec: ServeSpec, home: string): void {
  if (spec.weights && !fs.existsSync(spec.weights))
    throw new ServeError('weights_missing', `The weights ${spec.weights} do not exist: download them first, or name the file with --weights.`);
  if (spec.backend === 'llamacpp') {
    const configured = configuredLlamaServer(home);
    findLlamaServer({ ...(spec.binary ? { spec: spec.binary } : {}), ...(configured ? { configured } : {}), env: process.env });
  }
}

type EngineRow = ManagedStateFile['engines'][number] & { phase?: string; restarts?: number; lastError?: string; code?: string; url?: string; pid?: number };

function engineOf(state: ManagedStateFile | undefined, id: string): EngineRow | undefined {
  return state?.engines.find((e) => e.id === id) as EngineRow | undefined;
}

export async function modelsServeCommand(o: ServeOptions): Promise<number> {
  let spec: ServeSpec;
  try {
    spec = specOf(o);
    if (o.dryRun) {
      out(dryRun(spec, o.home));
      return 0;
    }
    preflight(spec, o.home);
  } catch (e) {
    err(`${(e as Error).message}${e instanceof ServeError ? ` (${e.code})` : ''}`);
    return e instanceof ServeError && e.code === 'llama_server_missing' ? 1 : 2;
  }
  const replaced = addDesired(o.home, spec);
  const { agentRunning } = readManagedState(o.home);
  out(
    `${replaced ? 'Updated' : 'Recorded'}: ${spec.id} served by ${spec.backend}${spec.weights ? ` from ${spec.weights}` : ''} (in ${homePath(o.home, 'managedEngines')}).`,
  );
  if (!agentRunning) {
    out('No agent runs with this home now: it starts when the agent does ("swan-provider run", or the desktop app).');
    return 0;
  }
  const waitS = int(o.wait ?? '120', '--wait') ?? 120;
  if (waitS === 0) {
    out('The running agent starts it now; "swan-provider models ps" shows how it goes.');
    return 0;
  }
  // Follow the agent's state file until the engine answers or fails.
  const until = Date.now() + waitS * 1000;
  let said = '';
  while (Date.now() < until) {
    const { state, agentRunning: still } = readManagedState(o.home);
    if (!still) {
      err('The agent stopped before the engine answered; it starts when the agent starts again.');
      return 1;
    }
    const e = engineOf(state, spec.id);
    const phase = e?.phase ?? 'starting';
    if (phase !== said) {
      said = phase;
      if (phase === 'serving') {
        out(`Serving: ${spec.id} answers at ${e?.url} and is announced to the network.`);
        return 0;
      }
      if (phase === 'failed') {
        err(`Failed (${e?.code ?? 'start_failed'}): ${e?.lastError ?? 'the engine did not start'}`);
        return 1;
      }
      out(`${phase === 'restarting' ? 'Restarting' : 'Starting'}${e?.lastError ? ` (${e.lastError})` : ''}…`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  err(`${spec.id} did not answer within ${waitS} s; the agent keeps trying. "swan-provider models ps" and the Logs page show why.`);
  return 1;
}

export async function modelsStopCommand(o: { home: string; id: string; wait?: number }): Promise<number> {
  if (!removeDesired(o.home, o.id)) {
    err(`This agent was not asked to run ${o.id} (see "swan-provider models ps"): nothing was stopped. Engines it did not start are never stopped by it.`);
    return 1;
  }
  const { agentRunning } = readManagedState(o.home);
  if (!agentRunning) {
    out(`Removed ${o.id}: no agent runs with this home, so nothing was running.`);
    return 0;
  }
  const until = Date.now() + (o.wait ?? 30) * 1000;
  while (Date.now() < until) {
    const { state, agentRunning: still } = readManagedState(o.home);
    if (!still || !engineOf(state, o.id)) {
      out(`Stopped ${o.id}: the engine has ended and the model is no longer announced.`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  err(`The agent has not stopped ${o.id} yet; "swan-provider models ps" shows it.`);
  return 1;
}

export function modelsPsCommand(o: { home: string; json?: boolean }): number {
  const wanted = desiredFile(o.home).read().value.engines;
  const { state, agentRunning } = readManagedState(o.home);
  const rows = wanted.map((s) => {
    const e = agentRunning ? engineOf(state, s.id) : undefined;
    return {
      id: s.id,
      backend: s.backend,
      ...(s.weights ? { weights: s.weights } : {}),
      phase: e?.phase ?? (agentRunning ? 'starting' : 'not_running'),
      ...(e?.url ? { url: e.url } : {}),
      ...(e?.pid !== undefined ? { pid: e.pid } : {}),
      restarts: e?.restarts ?? 0,
      ...(e?.code ? { code: e.code } : {}),
      ...(e?.lastError ? { lastError: e.lastError } : {}),
    };
  });
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ agentRunning, engines: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    out('No engines are run by the agent. Start one: swan-provider models serve --weights FILE.gguf <catalogue id>');
    return 0;
  }
  if (!agentRunning) out('No agent runs with this home: these start when it does.');
  for (const r of rows) {
    out(
      `${r.id}  ${r.backend}  ${r.phase}${r.url ? `  ${r.url}` : ''}${r.pid ? `  pid ${r.pid}` : ''}${r.restarts ? `  ${r.restarts} restart${r.restarts === 1 ? '' : 's'}` : ''}${r.weights ? `  file ${r.weights}` : ''}`,
    );
    if (r.lastError) out(`    ${r.code ? `${r.code}: ` : ''}${r.lastError}`);
  }
  return 0;
}
