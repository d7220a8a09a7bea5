// A real gateway for tests: the test engine, a ModelRegistry, the shared Scheduler, an InferenceRunner
// and a RequestBook, wired as the Agent wires them, plus one API key. Everything on 127.0.0.1:0.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import type { ClientOptions } from 'ws';
import { InferenceRunner } from '../../../src/core/inference/runner';
import { ModelRegistry } from '../../../src/core/models/registry';
import { describeFleet } from '../../../src/core/gateway/describe-fleet';
import { GatewayKeys } from '../../../src/core/gateway/keys';
import type { GatewayOptions } from '../../../src/core/gateway/options';
import { startGateway, type Gateway } from '../../../src/core/gateway/server';
import { memoryLog, type AgentLog } from '../../../src/core/base/log';
import { RequestBook } from '../../../src/core/inference/requests';
import { Scheduler } from '../../../src/core/scheduler/scheduler';
import { startTestEngine, type TestEngine, type TestEngineOptions } from '../engine-server';
import { JsonSocket } from './json-socket';

/** The model the seed 002 examples ask for; the rig serves it under this name. */
export const MODEL = 'gemini-2.5-pro';

export interface Rig {
  engine: TestEngine;
  gateway: Gateway;
  key: string;
  keys: GatewayKeys;
  home: string;
  book: RequestBook;
  scheduler: Scheduler;
  log: AgentLog;
  /** ws://127.0.0.1:PORT + path */
  ws(pathAndQuery: string): string;
  close(): Promise<void>;
}

export interface RigOptions {
  engine?: TestEngineOptions;
  gateway?: Partial<Omit<GatewayOptions, 'runner' | 'keys' | 'home' | 'log' | 'models' | 'fleet'>>;
  maxConcurrentPerEndpoint?: number;
  /** Waiting requests per model in the scheduler (default 32). */
  maxQueuePerModel?: number;
  /** Reuse a home folder (resume key) from an earlier rig. */
  home?: string;
}

export async function startRig(o: RigOptions = {}): Promise<Rig> {
  const home = o.home ?? fs.mkdtempSync(path.join(os.tmpdir(), 'swan-gateway-'));
  const engine = await startTestEngine(o.engine);
  const log = memoryLog();
  const registry = new ModelRegistry();
  registry.rebuild({ entries: { [MODEL]: { endpoint: engine.url, local_model: 'Qwen/Qwen3-0.6B' } }, configModels: [], engines: [], prefs: {} });
  const scheduler = new Scheduler(
    { maxConcurrentPerEndpoint: o.maxConcurrentPerEndpoint ?? 8, maxQueuePerModel: o.maxQueuePerModel ?? 32 },
    log.child('scheduler'),
  );
  scheduler.setModel(MODEL, [{ url: engine.url, health: 'healthy' }]);
  const book = new RequestBook();
  const runner = new InferenceRunner({ registry, admit: (m, opts) => scheduler.admit(m, opts), book, log: log.child('requests') });
  const keys = new GatewayKeys(home);
  const key = keys.list().some((k) => k.name === 'test') ? '' : keys.create('test').key;
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    runner,
    models: () => registry.announced(),
    keys,
    home,
    log: log.child('gateway'),
    fleet: () =>
      describeFleet({
        hostname: os.hostname(),
        gpus: [],
        models: registry.all().filter((m) => m.enabled),
        activeRequests: scheduler.inFlight(),
      }),
    ...o.gateway,
  });
  return {
    engine,
    gateway,
    key,
    keys,
    home,
    book,
    scheduler,
    log,
    ws: (p) => `ws://127.0.0.1:${gateway.port}${p}`,
    close: async () => {
      await gateway.close();
      scheduler.close();
      await engine.close();
      if (!o.home) fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface RigPerTest {
  /** Starts the test's rig; it is closed after the test (a second start replaces it: close the first yourself). */
  start(o?: RigOptions): Promise<Rig>;
  /** Opens a JSON socket that is terminated after the test. */
  open(url: string, protocols?: string | string[], opts?: ClientOptions): Promise<JsonSocket>;
  /** Closes the rig now (before the test removes a home folder it passed in). */
  close(): Promise<void>;
}

/** Call once at the top of a test file: one rig per test, and every socket it opened, closed after each test. */
export function rigPerTest(): RigPerTest {
  let rig: Rig | undefined;
  const sockets: JsonSocket[] = [];
  const close = async (): Promise<void> => {
    await rig?.close();
    rig = undefined;
  };
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.ws.terminate();
    await close();
  });
  return {
    start: async (o) => (rig = await startRig(o)),
    open: async (url, protocols, opts) => {
      const s = await JsonSocket.open(url, protocols, opts);
      sockets.push(s);
      return s;
    },
    close,
  };
}
