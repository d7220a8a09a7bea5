// The bridge verbs through a real Agent (real dev hub, real test engine, real ledger file): each
// channel's answer has the documented shape (InvokeResults, src/shared/bridge/channels.ts), bad arguments are
// refused with "Invalid arguments for <channel>: …", and the support bundle holds no secret. Each test
// that changes the agent's state has a stack of its own (beforeEach), so none depends on another's order.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { INVOKE_CHANNELS } from '../../../src/shared/bridge/channels';
import type { BridgeEvent } from '../../../src/shared/bridge/events';
import type { AgentSnapshot } from '../../../src/shared/views/snapshot';
import type { GatewayKeyView, SettingsView } from '../../../src/shared/views/settings';
import type { UsageReport } from '../../../src/shared/views/usage';
import type { EngineInfo, LogEntry, ModelState, PauseState, RequestView } from '../../../src/shared/types';
import { FileSecretStore } from '../../../src/core/config/secrets';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { chat, registered, requests, startStack, TEST_KEY, until, type Stack } from '../../support/stack';
import { createGatewayKey } from '../../support/approvals';

let stack: Stack;
let model: string;
const invoke = <T>(channel: string, args: unknown): Promise<T> => stack.agent.invoke(channel, args) as Promise<T>;

async function freshStack(): Promise<void> {
  stack = await startStack();
  await registered(stack);
  model = stack.engines[0]!.modelIds[0]!;
}
async function closeStack(): Promise<void> {
  await stack?.close();
}

/** One streamed request through the hub, finished and in the request book. */
async function streamOne(): Promise<void> {
  const res = await chat(stack.hub!, { model, messages: [{ role: 'user', content: 'hello' }], stream: true });
  expect(res.status).toBe(200);
  await res.text();
  await until(async () => (await requests(stack.agent)).some((v) => v.status === 'ok'), 'the request finished');
}

const SNAPSHOT_KEYS = [
  'catalogue',
  'discovery',
  'engines',
  'gateway',
  'gpu',
  'hasKey',
  'hubView',
  'identity',
  'link',
  'models',
  'nodeId',
  'nodeName',
  'onboarded',
  'pause',
  'providerStatus',
  'recent',
  'simulatedHub',
  'today',
  'todayEarningsReason',
  'verdict',
  'version',
  'weights',
];

function expectModelStates(models: ModelState[]): void {
  for (const m of models) {
    expect(m).toEqual({
      id: expect.any(String),
      enabled: expect.any(Boolean),
      health: expect.stringMatching(/^(healthy|degraded|unhealthy)$/),
      endpoints: expect.any(Array),
      inFlight: expect.any(Number),
      queued: expect.any(Number),
      maxConcurrent: expect.any(Number),
      maxQueue: expect.any(Number),
    });
  }
}

describe('every channel answers with its documented shape', () => {
  beforeEach(freshStack);
  afterEach(closeStack);

  it('snapshot.get', async () => {
    const s = await invoke<AgentSnapshot>('snapshot.get', {});
    expect(Object.keys(s).sort()).toEqual(SNAPSHOT_KEYS);
    expect(s.nodeId).toBe(stack.agent.identity.nodeId);
    // Where the node key comes from (made here, in this fresh home), for the Settings line.
    expect(s.identity).toEqual({ source: 'generated', file: stack.agent.identity.file });
    expect(s).toMatchObject({ nodeName: 'test-node', hasKey: true, onboarded: true, link: { state: 'connected' }, pause: { paused: false } });
    expect(s.today).toEqual({
      requests: expect.any(Number),
      errors: expect.any(Number),
      tokensIn: expect.any(Number),
      tokensOut: expect.any(Number),
      earnings: expect.any(Number),
      energyWh: expect.any(Number),
      cost: expect.any(Number),
    });
    expect(s.gateway).toEqual({ enabled: false, listen: '127.0.0.1:18080', running: false, keys: expect.any(Number) });
    expect(s.models.map((m) => m.id)).toEqual([model]);
    expectModelStates(s.models);
    // Absent args mean {} for argument-less channels.
    expect(Object.keys(await invoke<AgentSnapshot>('snapshot.get', undefined)).sort()).toEqual(SNAPSHOT_KEYS);
  });

  it('models.setEnabled: off then on again, persisted, announced to the hub', async () => {
    const off = await invoke<ModelState[]>('models.setEnabled', { model, enabled: false });
    expectModelStates(off);
    expect(off.find((m) => m.id === model)?.enabled).toBe(false);
    expect(stack.agent.settings.get().models?.[model]?.enabled).toBe(false);
    await until(() => stack.hub!.providers()[0]?.models.length === 0, 'the hub told the model is off');
    const on = await invoke<ModelState[]>('models.setEnabled', { model, enabled: true });
    expect(on.find((m) => m.id === model)?.enabled).toBe(true);
    await until(() => stack.hub!.providers()[0]?.models.includes(model) === true, 'the hub told the model is on');
  });

  it('models.setEnabled / setLimits refuse an unknown model with what to do', async () => {
    await expect(invoke('models.setEnabled', { model: 'nope', enabled: true })).rejects.toMatchObject({ code: 'not_found' });
    // The message names the model and what to do about it.
    await expect(invoke('models.setEnabled', { model: 'nope', enabled: true })).rejects.toThrow(
      'No model "nope" is known here. Rescan engines or add it to models.json.',
    );
    await expect(invoke('models.setLimits', { model: 'nope', maxConcurrent: 1, maxQueue: 0 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('models.setLimits', async () => {
    const models = await invoke<ModelState[]>('models.setLimits', { model, maxConcurrent: 3, maxQueue: 7 });
    expectModelStates(models);
    expect(models.find((m) => m.id === model)).toMatchObject({ maxConcurrent: 3, maxQueue: 7 });
    expect(stack.agent.settings.get().models?.[model]).toMatchObject({ maxConcurrent: 3, maxQueue: 7 });
  });

  it('models.warmup: a real greeting to the engine ("Hi", 64 tokens), its reply checked', async () => {
    const before = stack.engines[0]!.requests.length;
    const r = await invoke<{ success: boolean; loadTimeMs: number; memoryMb: number; error?: string }>('models.warmup', { model });
    expect(r).toEqual({ success: true, loadTimeMs: expect.any(Number), memoryMb: expect.any(Number) });
    const sent = stack.engines[0]!.requests.slice(before).find((q) => q.path === '/v1/chat/completions');
    expect(sent?.body).toMatchObject({ max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const unknown = await invoke<{ success: boolean; error?: string }>('models.warmup', { model: 'nope' });
    expect(unknown).toMatchObject({ success: false, error: expect.stringContaining('not served here') });
  });

  it('serving.pause and serving.resume', async () => {
    const p = await invoke<PauseState>('serving.pause', { reason: 'gaming' });
    expect(p).toEqual({ paused: true, cause: 'manual', reason: 'gaming', since: expect.any(Number) });
    expect((await invoke<AgentSnapshot>('snapshot.get', {})).pause.paused).toBe(true);
    const r = await invoke<PauseState>('serving.resume', {});
    expect(r.paused).toBe(false);
  });

  it('settings.get', async () => {
    const s = await invoke<SettingsView>('settings.get', {});
    expect(s).toEqual({
      hubUrl: stack.hub!.wsUrl,
      serviceUrl: stack.hub!.url,
      nodeName: 'test-node',
      keySet: true,
      keyStorage: 'config',
      gatewayEnabled: false,
      gatewayListen: '127.0.0.1:18080',
      startAtLogin: false,
      closeToTray: true,
      theme: 'system',
      autoPauseOnGpuBusy: false,
      gpuTemperatureCeilingC: 0,
      gpuPowerCeilingW: 0,
      pauseSchedule: [],
      retentionDays: 365,
      alertWebhookUrl: '',
      alertEmailTo: '',
      alertSmtpServer: '',
      // Whether an SMTP password is stored (in the secret store); never the password itself.
      alertSmtpPasswordSet: false,
      alertCooldownMinutes: 10,
      desktopNotifications: true,
      updateFeedUrl: '',
      addedEndpoints: [],
    });
    expect(JSON.stringify(s)).not.toContain(TEST_KEY);
  });

  it('settings.save: accepted values are kept; a new node name re-registers', async () => {
    expect(await invoke('settings.save', { patch: { nodeName: 'renamed rig', theme: 'dark', closeToTray: false } })).toEqual({ ok: true });
    const s = await invoke<SettingsView>('settings.get', {});
    expect(s).toMatchObject({ nodeName: 'renamed rig', theme: 'dark', closeToTray: false });
    await until(() => stack.hub!.providers()[0]?.nodeName === 'renamed rig', 'the hub sees the new name');
    expect(JSON.parse(fs.readFileSync(path.join(stack.home, 'settings.json'), 'utf8'))).toMatchObject({ nodeName: 'renamed rig', theme: 'dark' });
  });

  it('settings.save: validation errors per field, nothing saved', async () => {
    const before = await invoke<SettingsView>('settings.get', {});
    const r = await invoke('settings.save', {
      patch: { hubUrl: 'http://hub', serviceUrl: 'hub', nodeName: '', providerKey: 'bad key', gatewayListen: 'nowhere', retentionDays: 0, theme: 'light' },
    });
    expect(r).toEqual({
      ok: false,
      errors: {
        hubUrl: expect.stringContaining('ws:// or wss://'),
        serviceUrl: expect.stringContaining('http:// or https://'),
        nodeName: expect.stringContaining('1 to 64'),
        providerKey: expect.stringContaining('provider key'),
        gatewayListen: expect.stringContaining('host:port'),
        retentionDays: expect.stringContaining('1 to 3650'),
      },
    });
    expect(await invoke<SettingsView>('settings.get', {})).toEqual(before);
  });

  it('settings.checkKey asks the hub', async () => {
    // code: the outcome in a stable word; detail: what the hub's status says beyond valid/invalid (status, step, next steps).
    expect(await invoke('settings.checkKey', { key: TEST_KEY })).toEqual({
      valid: true,
      code: 'key_accepted',
      message: expect.any(String),
      detail: expect.objectContaining({ status: 'active', canConnect: true, nextSteps: [] }),
    });
    expect(await invoke('settings.checkKey', { key: 'sk-prov-not-the-key' })).toEqual({
      valid: false,
      code: 'key_refused',
      message: expect.any(String),
      detail: expect.objectContaining({ canConnect: false }),
    });
  });

  it('requests.list and requests.text after a streamed request through the hub', async () => {
    await streamOne();
    const list = await invoke<RequestView[]>('requests.list', {});
    const done = list.find((v) => v.status === 'ok')!;
    expect(done).toMatchObject({
      id: expect.any(String),
      source: 'hub',
      model,
      stream: true,
      startedAt: expect.any(Number),
      tokensIn: expect.any(Number),
      tokensOut: expect.any(Number),
      estimated: expect.any(Boolean),
    });
    expect(await invoke<RequestView[]>('requests.list', { limit: 1 })).toHaveLength(1);
    const text = await invoke<string>('requests.text', { id: done.id });
    expect(typeof text).toBe('string');
    expect(text.length).toBeGreaterThan(0);
    expect(await invoke('requests.text', { id: 'unknown' })).toBe('');
  });

  it('usage.report and usage.exportCsv read the ledger', async () => {
    await streamOne();
    await until(() => stack.agent.snapshot().today.requests > 0, 'the ledger has the request');
    const now = Date.now();
    const r = await invoke<UsageReport>('usage.report', { from: now - 3_600_000, to: now + 1000, bucket: '15m' });
    expect(Object.keys(r).sort()).toEqual(['buckets', 'errorRate', 'from', 'perModel', 'to', 'totals']);
    expect(r.totals.requests).toBeGreaterThanOrEqual(1);
    expect(r.buckets.length).toBeGreaterThanOrEqual(4);
    expect(r.buckets[0]).toEqual({
      start: expect.any(Number),
      requests: expect.any(Number),
      tokensIn: expect.any(Number),
      tokensOut: expect.any(Number),
      earnings: expect.any(Number),
      errors: expect.any(Number),
      energyWh: expect.any(Number),
      cost: expect.any(Number),
    });
    expect(r.perModel.map((m) => m.model)).toContain(model);
    const csv = await invoke<string>('usage.exportCsv', { from: now - 3_600_000, to: now + 1000 });
    const rows = csv.trimEnd().split('\r\n');
    expect(rows[0]).toMatch(/^request_id,source,model,/);
    expect(rows.length).toBeGreaterThanOrEqual(2);
    await expect(invoke('usage.exportCsv', { from: 10, to: 5 })).rejects.toMatchObject({
      code: 'invalid_args',
      message: expect.stringContaining('to must not be before from'),
    });
  });

  it('engines.rescan with discovery off: only the engines models.json names, probed', async () => {
    const list = await invoke<EngineInfo[]>('engines.rescan', {});
    expect(list.map((e) => [e.url, e.reachable, e.origin])).toEqual(stack.engines.map((e) => [e.url, true, 'owner']));
  });

  it('gpu.giveBack on a machine without several GPUs: nothing to choose, said as not_supported', async () => {
    await expect(invoke('gpu.giveBack', { index: 0, givenBack: true })).rejects.toMatchObject({ code: 'not_supported' });
    expect((await invoke<{ gpuServing?: unknown[] }>('snapshot.get', {})).gpuServing).toBeUndefined();
  });

  it('gpu.history and gpu.processes', async () => {
    expect(await invoke('gpu.history', { minutes: 5 })).toEqual([]);
    const procs = await invoke<unknown[]>('gpu.processes', {}).catch((e: Error) => e);
    // Without a GPU tool the list is empty or the error says so plainly.
    if (procs instanceof Error) expect(procs).toMatchObject({ code: 'unavailable' });
    else expect(Array.isArray(procs)).toBe(true);
  });

  it('logs.list with level and limit', async () => {
    stack.log.child('test').warn('a warning from the test');
    const warns = await invoke<LogEntry[]>('logs.list', { level: 'warn' });
    expect(warns.every((e) => e.level === 'warn' || e.level === 'error')).toBe(true);
    expect(warns.map((e) => e.msg)).toContain('a warning from the test');
    expect(await invoke<LogEntry[]>('logs.list', { limit: 1 })).toHaveLength(1);
    expect((await invoke<LogEntry[]>('logs.list', {}))[0]).toEqual(
      expect.objectContaining({ ts: expect.any(Number), level: expect.any(String), subsystem: expect.any(String), msg: expect.any(String) }),
    );
  });

  it('gateway.keys create / list / revoke', async () => {
    const created = await createGatewayKey(stack.agent, 'laptop');
    expect(created).toEqual({ name: 'laptop', key: expect.stringMatching(/^sk-swan-/) });
    const list = await invoke<GatewayKeyView[]>('gateway.keys.list', {});
    expect(list).toEqual([{ name: 'laptop', createdAt: expect.any(Number) }]);
    expect(JSON.stringify(list)).not.toContain(created.key);
    expect((await invoke<AgentSnapshot>('snapshot.get', {})).gateway.keys).toBe(1);
    await expect(invoke('gateway.keys.create', { name: 'laptop' })).rejects.toMatchObject({ code: 'already_exists' });
    await expect(invoke('gateway.keys.create', { name: 'a b' })).rejects.toMatchObject({ code: 'invalid_args' });
    expect(await invoke('gateway.keys.revoke', { name: 'laptop' })).toEqual([]);
    await expect(invoke('gateway.keys.revoke', { name: 'laptop' })).rejects.toMatchObject({ code: 'not_found' });
    expect((await invoke<AgentSnapshot>('snapshot.get', {})).gateway.keys).toBe(0);
  });

  it('onboarding.complete with a key', async () => {
    const s = await invoke<AgentSnapshot>('onboarding.complete', {});
    expect(Object.keys(s).sort()).toEqual(SNAPSHOT_KEYS);
    expect(s.onboarded).toBe(true);
    expect(stack.agent.settings.get().onboarded).toBe(true);
  });

  it('a state change pushes a snapshot event to subscribers', async () => {
    const events: BridgeEvent[] = [];
    const off = stack.agent.subscribe((e) => events.push(e));
    try {
      await invoke('models.setLimits', { model, maxConcurrent: 2, maxQueue: 5 });
      await until(() => events.some((e) => e.type === 'snapshot'), 'a snapshot event');
      const snap = events.find((e): e is Extract<BridgeEvent, { type: 'snapshot' }> => e.type === 'snapshot')!.snapshot;
      expect(snap.models.find((m) => m.id === model)).toMatchObject({ maxConcurrent: 2, maxQueue: 5 });
    } finally {
      off();
    }
  });
});

describe('refusals', () => {
  // Every call here is refused before it reaches the agent's state, so one stack serves them all.
  beforeAll(freshStack);
  afterAll(closeStack);

  it('an unknown channel', async () => {
    await expect(invoke('models.delete', {})).rejects.toMatchObject({ code: 'unknown_channel' });
    await expect(invoke('__proto__', {})).rejects.toMatchObject({ code: 'unknown_channel' });
    // The name is quoted cut to 64 characters.
    await expect(invoke('x'.repeat(500), {})).rejects.toMatchObject({ code: 'unknown_channel', message: `Unknown request "${'x'.repeat(64)}".` });
  });

  const bad: Record<string, { args: unknown; detail: string }> = {
    'snapshot.get': { args: { x: 1 }, detail: 'arguments: Unrecognized key: "x"' },
    'models.setEnabled': { args: { model: 'm', enabled: 'yes' }, detail: 'enabled:' },
    'models.warmup': { args: { model: '' }, detail: 'model:' },
    'models.setLimits': { args: { model: 'm', maxConcurrent: 0, maxQueue: 1 }, detail: 'maxConcurrent:' },
    'serving.pause': { args: { reason: 'x'.repeat(201) }, detail: 'reason:' },
    'serving.resume': { args: [], detail: 'arguments: Invalid input: expected object' },
    'settings.get': { args: 5, detail: 'arguments: Invalid input: expected object' },
    'settings.save': { args: { patch: { nodeName: 5 } }, detail: 'patch.nodeName:' },
    'settings.checkKey': { args: { key: '' }, detail: 'key:' },
    'requests.list': { args: { limit: 0 }, detail: 'limit:' },
    'requests.text': { args: {}, detail: 'id:' },
    'usage.report': { args: { from: 0, to: 1, bucket: 'week' }, detail: 'bucket:' },
    'usage.exportCsv': { args: { from: -1, to: 1 }, detail: 'from:' },
    'engines.rescan': { args: { now: true }, detail: 'Unrecognized key' },
    'engines.addEndpoint': { args: { url: '' }, detail: 'url:' },
    'engines.removeEndpoint': { args: { url: 5 }, detail: 'url:' },
    'gpu.history': { args: { minutes: 61 }, detail: 'minutes:' },
    'gpu.processes': { args: 'all', detail: 'expected object' },
    'gpu.giveBack': { args: { index: 0, givenBack: 'yes' }, detail: 'givenBack:' },
    'gpu.powerLimits': { args: { index: 0 }, detail: 'Unrecognized key' },
    'gpu.setPowerLimit': { args: { index: 0, watts: 250 }, detail: 'consent:' },
    'logs.list': { args: { level: 'trace' }, detail: 'level:' },
    'logs.bundle': { args: { include: 'secrets' }, detail: 'Unrecognized key' },
    'gateway.keys.list': { args: { all: true }, detail: 'Unrecognized key' },
    'gateway.keys.create': { args: { name: 'has space' }, detail: 'name: use letters, digits, dot, dash or underscore (1-64)' },
    'gateway.keys.revoke': { args: { name: '' }, detail: 'name:' },
    'onboarding.complete': { args: { skip: true }, detail: 'Unrecognized key' },
    'prices.list': { args: { all: true }, detail: 'Unrecognized key' },
    'prices.set': { args: { model: 'm', inputPerM: -1, outputPerM: 1 }, detail: 'inputPerM' },
    'notices.list': { args: { all: true }, detail: 'Unrecognized key' },
    'providerStatus.refresh': { args: { now: 1 }, detail: 'Unrecognized key' },
    'earnings.overview': { args: { refresh: 'yes' }, detail: 'refresh:' },
    'demand.list': { args: { all: 1 }, detail: 'Unrecognized key' },
    'demand.pull': { args: { engineUrl: 'http://127.0.0.1:11434' }, detail: 'model:' },
    'demand.serve': { args: { modelId: '' }, detail: 'modelId:' },
    'earnings.setElectricity': { args: { perKwh: 0.3, currency: 'euro' }, detail: 'currency: use a three-letter currency code' },
    'alerts.list': { args: { all: true }, detail: 'Unrecognized key' },
    'alerts.test': { args: { url: 'http://x' }, detail: 'Unrecognized key' },
    'models.try': { args: { model: 'm', prompt: 'x'.repeat(4001) }, detail: 'prompt:' },
    'update.check': { args: { download: true }, detail: 'Unrecognized key' },
    'update.download': { args: { version: '9.9.9' }, detail: 'Unrecognized key' },
    'update.install': { args: { when: 'later' }, detail: 'when:' },
    'update.status': { args: { all: true }, detail: 'Unrecognized key' },
    'app.info': { args: 1, detail: 'expected object' },
    'link.retry': { args: { now: true }, detail: 'Unrecognized key' },
    'gpu.longHistory': { args: { hours: 169 }, detail: 'hours:' },
    'usage.model': { args: { model: 'm', hours: 0 }, detail: 'hours:' },
    'usage.rails': { args: { from: 2, to: 1 }, detail: 'to must not be before from' },
    'network.records': { args: { span: '12mo' }, detail: 'span:' },
    'fleet.list': { args: { all: true }, detail: 'Unrecognized key' },
    'fleet.add': { args: { url: '' }, detail: 'url:' },
    'fleet.remove': { args: { id: '' }, detail: 'id:' },
    'fleet.openConsole': { args: {}, detail: 'id:' },
    'fleet.usage': { args: { refresh: true }, detail: 'Unrecognized key' },
    'fleet.tokens.list': { args: 1, detail: 'expected object' },
    'fleet.tokens.create': { args: { name: 'has space' }, detail: 'name: use letters, digits, dot, dash or underscore (1-64)' },
    'fleet.tokens.revoke': { args: { name: '' }, detail: 'name:' },
    'console.sessions': { args: { all: true }, detail: 'all' },
    'console.signOut': { args: { id: 'not-an-id' }, detail: 'id:' },
    'managed.list': { args: { all: true }, detail: 'all' },
    'managed.serve': { args: { id: 'x', binary: '/bin/sh' }, detail: 'binary' },
    'managed.stop': { args: { id: '' }, detail: 'id:' },
    'models.confirmMapping': { args: { model: 'x' }, detail: 'signature' },
    'models.recommend': { args: { vramGb: 0 }, detail: 'vramGb:' },
    'models.serveAs': { args: { model: 'x' }, detail: 'networkId' },
    'models.catalogueIds': { args: { extra: 1 }, detail: 'extra' },
    'downloads.list': { args: { extra: 1 }, detail: 'extra' },
    'downloads.start': { args: { modelId: '' }, detail: 'modelId:' },
    'downloads.cancel': { args: {}, detail: 'modelId' },
    'account.get': { args: { refresh: true }, detail: 'Unrecognized key' },
    'account.setBeneficiary': { args: { address: '' }, detail: 'address:' },
    'account.setOwner': { args: { address: '0x46f2b8De0B7Fa1B1cF6C0dB5C2E8a9d40f13F93c' }, detail: 'permanent:' },
    'account.requestApproval': { args: { hardwareSummary: '1x RTX 4090', contactEmail: 'not-an-email' }, detail: 'contactEmail: type the e-mail address' },
  };

  it('the table below covers every channel', () => {
    expect(Object.keys(bad).sort()).toEqual([...INVOKE_CHANNELS].sort());
  });

  it.each(Object.entries(bad))('%s with invalid arguments', async (channel, { args, detail }) => {
    const err = await invoke(channel, args).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).toMatchObject({ code: 'invalid_args' });
    // The message names the channel and the field at fault.
    expect(err!.message.startsWith(`Invalid arguments for ${channel}: `)).toBe(true);
    expect(err!.message).toContain(detail);
  });

  it('a refused call leaves the agent serving', async () => {
    // The refusal names the field at fault.
    await expect(invoke('settings.save', { patch: 'x' })).rejects.toMatchObject({ code: 'invalid_args', field: 'patch' });
    expect(stack.agent.hubStatus().connected).toBe(true);
    expect((await invoke<AgentSnapshot>('snapshot.get', {})).link.state).toBe('connected');
  });
});

describe('a fresh agent without a key', () => {
  let bare: Stack | undefined;
  afterAll(async () => {
    await bare?.close();
  });

  it('onboarding.complete asks for the key; saving one stores it in the secret store, not the settings', async () => {
    bare = await startStack({ key: '' });
    const a = bare.agent;
    expect((await a.invoke('snapshot.get', {})) as AgentSnapshot).toMatchObject({ hasKey: false, onboarded: false });
    await expect(a.invoke('onboarding.complete', {})).rejects.toMatchObject({ code: 'not_ready', message: 'Paste your provider key first.' });
    expect(((await a.invoke('settings.get', {})) as SettingsView).keyStorage).toBe('none');
    expect(await a.invoke('settings.save', { patch: { providerKey: `  ${TEST_KEY}  ` } })).toEqual({ ok: true });
    expect(new FileSecretStore(bare.home).get('providerKey')).toBe(TEST_KEY);
    expect(fs.readFileSync(path.join(bare.home, 'settings.json'), 'utf8')).not.toContain(TEST_KEY);
    expect((await a.invoke('settings.get', {})) as SettingsView).toMatchObject({ keySet: true, keyStorage: 'file' });
    // The link starts with the new key.
    await registered(bare);
    expect(((await a.invoke('onboarding.complete', {})) as AgentSnapshot).onboarded).toBe(true);
    // An empty key removes it.
    expect(await a.invoke('settings.save', { patch: { providerKey: '' } })).toEqual({ ok: true });
    expect(new FileSecretStore(bare.home).get('providerKey')).toBeUndefined();
    expect(((await a.invoke('settings.get', {})) as SettingsView).keySet).toBe(false);
  });
});

describe('logs.bundle', () => {
  let own: Stack | undefined;
  afterAll(async () => {
    await own?.close();
  });

  it('is JSON with the support facts and contains no provider key, not even one the hub refused', async () => {
    own = await startStack();
    await registered(own);
    const a = own.agent;
    // A key in a form the log redaction does not recognise (no sk- prefix), saved and refused by the hub.
    const odd = 'provKEY.abcdef123456';
    expect(await a.invoke('settings.save', { patch: { providerKey: odd } })).toEqual({ ok: true });
    await until(() => a.hubStatus().state === 'auth_failed', 'the hub refuses the new key');
    const created = await createGatewayKey(a, 'app');
    const text = (await a.invoke('logs.bundle', {})) as string;
    const bundle = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(bundle).sort()).toEqual(['engines', 'generatedAt', 'gpu', 'link', 'logs', 'models', 'pause', 'platform', 'settings', 'version']);
    expect((bundle.logs as unknown[]).length).toBeGreaterThan(0);
    expect(bundle.settings).toMatchObject({ keySet: true });
    for (const secret of [TEST_KEY, odd, created.key, created.key.slice('sk-swan-'.length)]) expect(text).not.toContain(secret);
  });
});

describe('engines.addEndpoint with discovery on', () => {
  let own: Stack | undefined;
  let extra: TestEngine | undefined;
  afterAll(async () => {
    await own?.close();
    await extra?.close();
  });

  it('probes the new endpoint, remembers it, lists its models, and switches on the model the owner named', async () => {
    own = await startStack({ agent: { Discovery: true } });
    extra = await startTestEngine({ engineType: 'ollama', models: ['llama3.2:3b'] });
    const engines = (await own.agent.invoke('engines.addEndpoint', { url: `${extra.url}/v1/`, model: 'llama3.2:3b' })) as Array<{
      url: string;
      type: string;
      models: string[];
      reachable: boolean;
      origin: string;
    }>;
    expect(engines).toContainEqual(expect.objectContaining({ url: extra.url, type: 'ollama', models: ['llama3.2:3b'], reachable: true, origin: 'owner' }));
    expect(own.agent.settings.get().extraEndpoints).toEqual([{ url: extra.url, model: 'llama3.2:3b' }]);
    const snap = (await own.agent.invoke('snapshot.get', {})) as AgentSnapshot;
    expect(snap.models.find((m) => m.id === 'llama3.2:3b')).toMatchObject({ enabled: true });
    await expect(own.agent.invoke('engines.addEndpoint', { url: 'ftp://x' })).rejects.toMatchObject({ code: 'invalid_args' });
  });
});
