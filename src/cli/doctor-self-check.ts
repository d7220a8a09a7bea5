// `doctor`'s part of the self-check a running agent makes: the same inputs, read by the same core
// code (bridge/machine-checks.ts), decided by the same function (verdict.ts machineChecks), so each finding
// carries the code the agent's verdict uses. What a one-shot check can read itself: the windows the served
// models' engines run under models.json's `context_length`, and the disk under the home. The traffic since the
// link came up only a running agent knows: it is asked of the agent of this home (src/cli/console-link.ts),
// and with none that answers it is "unknown", never a pass.
import os from 'node:os';
import { ContextLengths } from '../core/engine-client/context-length';
import { contextTargets } from '../core/models/context-targets';
import type { ModelRegistry } from '../core/models/registry';
import { MachineCheckReader } from '../core/bridge/machine-checks';
import { machineChecks, NO_TRAFFIC_AFTER_MS, type MachineChecks } from '../core/bridge/verdict';
import { readHolder } from '../core/config/home-lock';
import { processAlive } from '../core/base/process-alive';
import type { VerdictCode, VerdictReason } from '../shared/types';
import { askSelfCheck } from './console-link';

/** The self-check's findings, by the running agent's codes. */
export type SelfCheckCode = Extract<VerdictCode, 'context_not_honoured' | 'disk_nearly_full' | 'no_traffic'>;
export const SELF_CHECK_CODES: readonly SelfCheckCode[] = ['context_not_honoured', 'disk_nearly_full', 'no_traffic'];

/** One finding of the self-check: found, checked and clear, or not known (not a pass). */
export interface SelfCheckItem {
  code: SelfCheckCode;
  state: 'found' | 'clear' | 'unknown';
  /** The models it is about (found, or unknown for these). */
  models?: string[];
  /** What was seen, in plain words. */
  detail: string;
  /** What to do (found). */
  next?: string;
}

/** The agent running in the home, as far as doctor can tell: none, one that did not answer, or its answer. */
type RunningAgent = { state: 'none' } | { state: 'silent'; pid: number } | { state: 'answered'; pid: number; checks: MachineChecks };

async function runningAgent(home: string): Promise<RunningAgent> {
  // agent.json names the holder of the home's lock while it runs (config/home-lock.ts); a dead pid is a crash's leftover.
  const holder = readHolder(home);
  if (!holder || (holder.host === os.hostname() && !processAlive(holder.pid))) return { state: 'none' };
  const a = await askSelfCheck(home);
  return a ? { state: 'answered', pid: a.pid, checks: a.checks } : { state: 'silent', pid: holder.pid };
}

export interface SelfCheckRead {
  /** The verdict's input (VerdictInputs.checks). */
  inputs: MachineChecks;
  contexts: ContextLengths;
  served: string[];
  agent: RunningAgent;
}

/** Reads the self-check's inputs for the models doctor found served. */
export async function readSelfCheck(home: string, registry: ModelRegistry, served: string[]): Promise<SelfCheckRead> {
  const contexts = new ContextLengths({ timeoutMs: 5000 });
  const [, agent] = await Promise.all([contexts.refresh(contextTargets(registry, served)), runningAgent(home)]);
  const own = new MachineCheckReader().read({ home, announced: served, contexts });
  const traffic = agent.state === 'answered' ? agent.checks.traffic : undefined;
  return { inputs: { ...own, ...(traffic ? { traffic } : {}) }, contexts, served, agent };
}

const gb = (bytes: number): string => (bytes / 1024 ** 3).toFixed(1);

/** Each finding's state, from the agent's own decision (machineChecks) over the inputs read, and what was not known. */
export function selfCheckItems(r: SelfCheckRead, routable: string[]): SelfCheckItem[] {
  const findings = machineChecks(r.inputs, routable);
  const found = (code: SelfCheckCode): VerdictReason | undefined => findings.find((f) => f.code === code);
  const item = (code: SelfCheckCode, otherwise: Omit<SelfCheckItem, 'code'>): SelfCheckItem => {
    const f = found(code);
    if (!f) return { code, ...otherwise };
    const models = findings.filter((x) => x.code === code).flatMap((x) => x.models ?? []);
    return {
      code,
      state: 'found',
      ...(models.length ? { models } : {}),
      detail: findings
        .filter((x) => x.code === code)
        .map((x) => x.text)
        .join(' '),
      ...(f.next ? { next: f.next } : {}),
    };
  };
  return [item('context_not_honoured', contextState(r)), item('disk_nearly_full', diskState(r)), item('no_traffic', trafficState(r, routable))];
}

function contextState(r: SelfCheckRead): Omit<SelfCheckItem, 'code'> {
  if (r.served.length === 0) return { state: 'unknown', detail: 'context windows: nothing is served to check' };
  const declared = r.served.filter((id) => r.contexts.get(id).source === 'override');
  const unstated = declared.filter((id) => !r.contexts.engineWindow(id));
  if (unstated.length)
    return {
      state: 'unknown',
      models: unstated,
      detail: `context windows: the engine of ${unstated.join(', ')} does not state the window it runs, so models.json's context_length is not checked`,
    };
  if (declared.length === 0)
    return { state: 'clear', detail: "context windows: no served model declares context_length; each is announced with its engine's own window" };
  return {
    state: 'clear',
    detail: `context windows: ${declared.map((id) => `${id} declares ${r.contexts.get(id).length}, its engine runs ${r.contexts.engineWindow(id)!.length}`).join('; ')}`,
  };
}

function diskState(r: SelfCheckRead): Omit<SelfCheckItem, 'code'> {
  const d = r.inputs.disk;
  if (!d || d.totalBytes <= 0) return { state: 'unknown', detail: 'the disk under the home could not be read' };
  return { state: 'clear', detail: `disk under ${d.path}: ${gb(d.freeBytes)} GB free of ${gb(d.totalBytes)} GB` };
}

function trafficState(r: SelfCheckRead, routable: string[]): Omit<SelfCheckItem, 'code'> {
  const a = r.agent;
  if (a.state === 'none') return { state: 'unknown', detail: 'traffic since start: no agent runs in this home to ask (only a running agent counts it)' };
  if (a.state === 'silent')
    return {
      state: 'unknown',
      detail: `traffic since start: the agent running in this home (pid ${a.pid}) did not answer (an agent older than this command does not)`,
    };
  const t = r.inputs.traffic;
  if (!t) return { state: 'unknown', detail: `traffic since start: the agent running in this home (pid ${a.pid}) is not connected to the hub` };
  if (routable.length === 0) return { state: 'unknown', detail: 'traffic since start: nothing is routed here, so no traffic is expected' };
  const min = Math.floor((t.now - t.connectedSince) / 60_000);
  if (t.hubRequests > 0)
    return { state: 'clear', detail: `traffic since start: ${t.hubRequests} request(s) from the network (the agent of this home, pid ${a.pid})` };
  return {
    state: 'clear',
    detail: `traffic since start: connected ${min} min ago, no request yet (the agent of this home, pid ${a.pid}; said after ${NO_TRAFFIC_AFTER_MS / 60_000} min without any)`,
  };
}
