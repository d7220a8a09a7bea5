// A whole provider stack for integration tests: the real dev hub, real test engines serving real
// traces, and the real Agent with a config.toml written to a fresh temp home. Fast timings.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Agent } from '../../src/core/agent';
import { memoryLog, type AgentLog } from '../../src/core/base/log';
import type { LogEntry, ModelState, RequestView, UsageTotals } from '../../src/shared/types';
import type { InvokeChannel, InvokeResults } from '../../src/shared/bridge/channels';
import type { InvokeArgs } from '../../src/shared/bridge/schemas';
import { parseCsv } from './ledger/helpers';
import { startDevHub, type DevHub, type DevHubOptions } from '../../src/cli/dev-hub';
import type { ConfigFile } from '../../src/core/config/config';
import { writeConfigToml } from './config-toml';
import { startTestEngine, type TestEngine, type TestEngineOptions } from './engine-server';

export const TEST_KEY = 'sk-prov-test-1234567890';

export interface StackOptions {
  engines?: TestEngineOptions[];
  /** model id -> { engine index, local_model?, api_key? } ; default: every engine model at its engine. */
  models?: Record<string, { engine: number; local_model?: string; api_key?: string }>;
  hub?: DevHubOptions | false;
  /** [Agent] keys over the fast test timings. */
  agent?: ConfigFile['Agent'];
  key?: string;
  /** Hub URL to dial when hub is false (e.g. a port nothing listens on yet). */
  hubUrl?: string;
  /** ServiceURL (the platform's HTTP API) when it is not the dev hub, e.g. a platform stand-in. */
  serviceUrl?: string;
  start?: boolean;
  /** Prometheus metrics on (AgentOptions.metrics). */
  metrics?: boolean;
  /** The agent's environment beyond PATH (e.g. LD_LIBRARY_PATH for a managed llama-server). */
  env?: NodeJS.ProcessEnv;
  /** GPU detection and sampling on (AgentOptions.gpu; the stand-in nvidia-smi goes first on env.PATH). */
  gpu?: boolean;
}

export interface Stack {
  hub?: DevHub;
  engines: TestEngine[];
  agent: Agent;
  /** The AgentLog the stack gave the agent (a host's own: tests write lines into it). */
  log: AgentLog;
  home: string;
  close(): Promise<void>;
}

const FAST: NonNullable<ConfigFile['Agent']> = {
  HeartbeatIntervalSeconds: 0.2,
  HealthCheckIntervalSeconds: 0.1,
  PingIntervalSeconds: 0.2,
  ReadTimeoutSeconds: 1,
  ReconnectMaxBackoffSeconds: 0.2,
  AuthFailedBackoffSeconds: 30,
  ResumeGraceSeconds: 0.5,
  Discovery: false,
  // The deep health check's 1-token chats would add to what tests count at their engines; its own tests turn it on.
  DeepHealthCheckEvery: 0,
};

/** A port nothing listens on right now (127.0.0.1), for a server a test starts later. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export function tempHome(prefix = 'swan-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const engines: TestEngine[] = [];
  for (const e of o.engines ?? [{}]) engines.push(await startTestEngine(e));
  const hub = o.hub === false ? undefined : await startDevHub({ token: TEST_KEY, ...(o.hub ?? {}) });
  const home = tempHome();
  const models: Record<string, Record<string, string>> = {};
  if (o.models) {
    for (const [id, m] of Object.entries(o.models)) {
      models[id] = {
        endpoint: `${engines[m.engine]!.url}/v1`,
        ...(m.local_model ? { local_model: m.local_model } : {}),
        ...(m.api_key ? { api_key: m.api_key } : {}),
      };
    }
  } else {
    for (const e of engines) for (const id of e.modelIds) models[id] ??= { endpoint: e.url };
  }
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(models, null, 2));
  const configPath = writeConfigToml(home, {
    API: { NodeName: 'test-node' },
    Inference: {
      WebSocketURL: o.hubUrl ?? hub?.wsUrl ?? 'ws://127.0.0.1:9',
      ServiceURL: o.serviceUrl ?? hub?.url ?? 'http://127.0.0.1:9',
      ApiKey: o.key ?? TEST_KEY,
    },
    Agent: { ...FAST, ...o.agent },
  });
  const log = memoryLog();
  const agent = await Agent.create({
    home,
    configPath,
    log,
    gpu: o.gpu === true,
    discovery: o.agent?.Discovery === true,
    env: { PATH: process.env.PATH, ...o.env },
    ...(o.metrics ? { metrics: true } : {}),
  });
  if (o.start !== false) await agent.start();
  return {
    hub,
    engines,
    agent,
    log,
    home,
    close: async () => {
      await agent.stop();
      await hub?.close();
      for (const e of engines) await e.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

/** Resolves when `cond` holds (it may be async, e.g. a bridge call), checking every 10 ms. Rejects after the deadline. */
export async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A model as the console shows it (the snapshot's models: enabled, health, endpoints, counts). */
export function modelOf(agent: Agent, id: string): ModelState | undefined {
  return agent.snapshot().models.find((m) => m.id === id);
}

/** The agent's recent log lines, as the console's Logs page reads them (logs.list), newest last. */
export async function logEntries(agent: Agent, limit = 500, level: LogEntry['level'] = 'debug'): Promise<LogEntry[]> {
  return (await agent.invoke('logs.list', { limit, level })) as LogEntry[];
}

/** A bridge call as the console makes it, typed by its channel (the agent validates the arguments itself). */
export function call<C extends InvokeChannel>(agent: Agent, channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]> {
  return agent.invoke(channel, args) as Promise<InvokeResults[C]>;
}

/** The request list as the console's Requests page reads it (requests.list), newest first. */
export function requests(agent: Agent, limit?: number): Promise<RequestView[]> {
  return call(agent, 'requests.list', limit === undefined ? {} : { limit });
}

/** The newest request's status in the console's list (undefined before the first request). */
export async function lastStatus(agent: Agent): Promise<RequestView['status'] | undefined> {
  return (await requests(agent, 1))[0]?.status;
}

/** Today's usage totals from the ledger, as the Today card shows them (the snapshot's today). */
export function today(agent: Agent): UsageTotals {
  return agent.snapshot().today;
}

/** The ledger's rows of the last hour as the owner exports them (usage.exportCsv), one record per row keyed by column. */
export async function ledgerRows(agent: Agent): Promise<Array<Record<string, string>>> {
  const now = Date.now();
  const [header, ...rows] = parseCsv(await call(agent, 'usage.exportCsv', { from: now - 3_600_000, to: now + 60_000 }));
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i] ?? ''])));
}

/** Waits for the agent to be registered with the hub. */
export function registered(stack: Stack, timeoutMs = 5000): Promise<void> {
  return until(() => stack.agent.hubStatus().connected && (stack.hub?.providers().some((p) => p.connected) ?? true), 'agent registered', timeoutMs);
}

/** Reads an SSE response body into its data payloads (JSON-parsed, "[DONE]" kept as a string). */
export async function readSse(res: Response): Promise<unknown[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .map((block) =>
      block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trim())
        .join('\n'),
    )
    .filter((d) => d !== '')
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}

/** The content text of chat / completion chunks. */
export function chunkText(events: unknown[]): string {
  let out = '';
  for (const e of events) {
    if (typeof e !== 'object' || e === null) continue;
    const c = (e as { choices?: Array<{ delta?: { content?: string | null }; text?: string }> }).choices?.[0];
    out += c?.delta?.content ?? c?.text ?? '';
  }
  return out;
}

export async function chat(hub: DevHub, body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${hub.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...init });
}
