// The real built main bundle (src/main -> out/main/index.js, with the real Agent inside) running in a
// child Node process where a stand-in answers for the Electron API (test/support/main/fake-electron). The dev hub
// and a test engine run here. This covers what the Electron e2e covers where no Electron binary exists:
// the window's settings, IPC sender checks, pushes after ready, the tray following the agent, close to
// tray, the keychain store, and a clean quit.
import { fork, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub, type DevProvider } from '../../../src/cli/dev-hub';
import type { InvokeReply } from '../../../src/shared/bridge/transport';
import type { UpdateCheckView } from '../../../src/shared/views/settings';
import { startTestEngine, type TestEngine } from '../../support/engine-server';
import { writeConfigToml } from '../../support/config-toml';

const root = path.resolve(__dirname, '../../..');
const KEY = 'sk-prov-main-test-1234567890';
const ANNOUNCED = 'Qwen/Qwen2.5-7B-Instruct';

let work: string; // inside the project, so the bundle resolves node_modules
let outDir: string;
let home: string;
let hub: DevHub;
let engine: TestEngine;
let appUrl: string;
let main: MainProcess;

/** What the Electron stand-in recorded (test/support/main/fake-electron/electron.mjs, command "state"). */
interface FakeState {
  lockRequested: boolean;
  userData: string;
  window: {
    options: { webPreferences: Record<string, unknown>; minWidth: number; minHeight: number };
    loaded: string;
    visible: boolean;
    destroyed: boolean;
    url: string;
  } | null;
  tray: { image: string; tooltip: string; menu: { id: string; label: string; enabled?: boolean }[]; destroyed: boolean } | null;
  ipcHandlers: string[];
  ipcListeners: string[];
  sent: { channel: string; types: string[] | null }[];
  csp: string | null;
  loginItem: unknown;
  errorBox: unknown;
  openedExternal: string[];
  notifications: { title: string; body: string; silent: boolean }[];
  /** URLs electron-updater asked Electron's net module for. */
  netRequests: string[];
}

interface MainProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  ask<T>(cmd: string, args?: Record<string, unknown>): Promise<T>;
  kill(): Promise<void>;
}

/** Starts the built main bundle on `home` with the Electron stand-in; talks to it over the fork channel. */
function launchMain(homeDir: string, extraEnv: Record<string, string> = {}): MainProcess {
  const env: NodeJS.ProcessEnv = { ...process.env, SWAN_HOME: homeDir, SWAN_E2E: '1', ...extraEnv };
  delete env.INFERENCE_API_KEY;
  delete env.INFERENCE_WS_URL;
  delete env.ELECTRON_RENDERER_URL;
  const child = fork(path.join(outDir, 'main', 'index.js'), [], {
    execArgv: ['--import', pathToFileURL(path.join(root, 'test', 'support', 'main', 'fake-electron', 'register.mjs')).href],
    env,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  let nextId = 1;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  child.on('message', (m: { id?: number; ok?: boolean; value?: unknown; error?: string }) => {
    const w = m.id === undefined ? undefined : waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id!);
    if (m.ok) w.resolve(m.value);
    else w.reject(new Error(m.error));
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    exited,
    output: () => output,
    ask<T>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`no answer to ${cmd} within 20 s; app output:\n${output.slice(-3000)}`));
          // A bound, not a pace: the bundle's first answer can take seconds on a busy 2-core machine.
        }, 20_000);
        waiting.set(id, {
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as T);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
        child.send({ id, cmd, args });
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

const ask = <T>(cmd: string, args: Record<string, unknown> = {}) => main.ask<T>(cmd, args);
const state = () => ask<FakeState>('state');
const invoke = (channel: string, args: unknown, url = appUrl) => ask<InvokeReply<unknown>>('invoke', { url, channel, args });
/** The agent's verdict, by its first reason's stable code (undefined while serving with nothing to report). */
async function verdictCode(): Promise<string | undefined> {
  const r = (await invoke('snapshot.get', {})) as InvokeReply<{ verdict: { reasons: { code: string }[] } }>;
  return r.ok ? r.value.verdict.reasons[0]?.code : `error: ${r.error}`;
}

/** Bounded polling where the app offers no event to wait on. */
async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000, proc: MainProcess = main): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!ok(last)) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 500)}\napp output:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 50));
    last = await read();
  }
  return last;
}

const nextRegister = (): Promise<DevProvider> => once(hub.events, 'register').then(([p]) => p as DevProvider);

beforeAll(async () => {
  fs.mkdirSync(path.join(root, '.tmp'), { recursive: true });
  work = fs.mkdtempSync(path.join(root, '.tmp', 'main-process-'));
  outDir = path.join(work, 'out');
  home = path.join(work, 'home');
  fs.mkdirSync(home);

  const { loadConfigFromFile, MainConfigFactory } = await import('electron-vite');
  const { build } = await import('vite');
  const loaded = await loadConfigFromFile({ mode: 'production', command: 'build' }, 'electron.vite.config.ts', root, 'silent');
  await build(await new MainConfigFactory(loaded.config.main!, { configFile: false, logLevel: 'silent', root, build: { outDir } }, { outDir, root }).build());
  appUrl = pathToFileURL(path.join(outDir, 'renderer', 'index.html')).href;

  engine = await startTestEngine({});
  hub = await startDevHub({ token: KEY, earningsEnabled: true });
  // Announced under an id of the dev hub's catalogue (the engine's own name kept in local_model), so the
  // network routes it and the verdict can be "serving".
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify({ [ANNOUNCED]: { endpoint: engine.url, local_model: engine.modelIds[0] } }));
  writeConfigToml(home, {
    API: { NodeName: 'smoke' },
    Inference: { WebSocketURL: hub.wsUrl, ServiceURL: hub.url, ApiKey: KEY },
    Agent: { Discovery: false, HeartbeatIntervalSeconds: 0.3, HealthCheckIntervalSeconds: 0.1, ReconnectMaxBackoffSeconds: 0.2 },
  });

  main = launchMain(home, { FAKE_KEYCHAIN: '1' });
}, 60_000);

afterAll(async () => {
  await main?.kill();
  await hub?.close();
  await engine?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

describe('desktop main process (real bundle, stand-in Electron)', () => {
  it('boots with one lock, one hardened window on the built page, a tray and one IPC handler', async () => {
    const s = await until('the window and tray', state, (v) => !!v.window?.loaded && !!v.tray);
    expect(s.lockRequested).toBe(true);
    expect(s.userData).toBe(home);
    expect(s.window!.loaded).toBe(path.join(outDir, 'renderer', 'index.html'));
    expect(s.window!.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      webSecurity: true,
      webviewTag: false,
      preload: path.join(outDir, 'preload', 'index.cjs'),
    });
    expect(s.window!.options).toMatchObject({ minWidth: 1024, minHeight: 640 });
    expect(s.ipcHandlers).toEqual(['swan:invoke']);
    expect(s.ipcListeners).toEqual(['swan:ready']);
    expect(s.csp).toContain("script-src 'self';");
    expect(s.csp).toContain("object-src 'none'");
    // A fresh profile never touches the OS login items.
    expect(s.loginItem).toBeNull();
    expect(s.errorBox).toBeNull();
  });

  it('answers our page and refuses other senders, unknown channels and bad arguments', async () => {
    const snap = await invoke('snapshot.get', {});
    expect(snap.ok).toBe(true);
    expect(snap.ok && (snap.value as { nodeName: string }).nodeName).toBe('smoke');
    expect(await invoke('snapshot.get', {}, 'https://evil.example/')).toEqual({
      ok: false,
      code: 'refused',
      error: 'Refused: this page is not allowed to talk to the agent.',
    });
    expect(await invoke('snapshot.get', {}, pathToFileURL(path.join(outDir, 'renderer', 'other.html')).href)).toMatchObject({ ok: false, code: 'refused' });
    const unknown = await invoke('shell.exec', { cmd: 'id' });
    expect(unknown).toMatchObject({ ok: false, code: 'unknown_channel' });
    const bad = await invoke('models.setLimits', { model: 'x', maxConcurrent: -1, maxQueue: 0 });
    expect(bad).toMatchObject({ ok: false, code: 'invalid_args' });
  });

  it('pushes event batches only after the page says it is ready', async () => {
    const before = await state();
    expect(before.sent.filter((s) => s.channel === 'swan:events')).toEqual([]);
    // A ready signal from a stranger changes nothing.
    await ask('ready', { url: 'https://evil.example/' });
    await ask('ready', { url: appUrl });
    const after = await until('a pushed batch', state, (v) => v.sent.some((s) => s.channel === 'swan:events'));
    const batches = after.sent.filter((s) => s.channel === 'swan:events');
    expect(batches.every((b) => Array.isArray(b.types) && b.types.length > 0)).toBe(true);
  });

  it('shows serving in the tray, pauses and resumes from the tray menu, and the hub hears each change', async () => {
    const model = ANNOUNCED;
    await until(
      'the hub to see the provider',
      async () => hub.providers()[0],
      (p) => !!p?.connected && p.models.includes(model),
    );
    const serving = await until('tray serving', state, (v) => !!v.tray?.image.endsWith('tray-serving.png'));
    expect(await verdictCode()).toBe(undefined); // serving: routed and earning, nothing to report
    expect(serving.tray!.menu.map((i) => i.id)).toEqual(['status', undefined, 'pause', 'open', undefined, 'quit']);

    const paused = nextRegister();
    await ask('clickTray', { id: 'pause' });
    expect((await paused).models).toEqual([]);
    const p = await until('tray paused', state, (v) => !!v.tray?.image.endsWith('tray-paused.png'));
    expect(p.tray!.tooltip).toContain('paused from the tray');
    expect(await verdictCode()).toBe('paused');
    expect(p.tray!.menu.some((i) => i.id === 'resume')).toBe(true);
    const pauseState = await invoke('snapshot.get', {});
    expect(pauseState.ok && (pauseState.value as { pause: { paused: boolean } }).pause.paused).toBe(true);

    const resumed = nextRegister();
    await ask('clickTray', { id: 'resume' });
    expect((await resumed).models).toContain(model);
    await until('tray serving again', state, (v) => !!v.tray?.image.endsWith('tray-serving.png'));
  });

  it('blocks new windows and navigation, opens only http(s) outside, refuses permissions', async () => {
    expect(await ask('openWindow', { url: 'file:///etc/passwd' })).toEqual({ action: 'deny' });
    expect(await ask('openWindow', { url: 'https://docs.example.org/swan' })).toEqual({ action: 'deny' });
    expect(await ask('navigate', { url: 'https://evil.example/' })).toBe(true);
    expect(await ask('navigate', { url: 'javascript:alert(1)' })).toBe(true);
    const s = await state();
    expect(s.openedExternal).toEqual(['https://docs.example.org/swan', 'https://evil.example/']);
    expect(await ask('permission', { name: 'media' })).toBe(false);
    expect(await ask('permission', { name: 'geolocation' })).toBe(false);
    expect(await ask('permission', { name: 'clipboard-sanitized-write' })).toBe(true);
  });

  it('keeps a saved key in the keychain store, never in plain text, and shows auth failed when the hub refuses it', async () => {
    const wrong = 'sk-prov-refused-by-the-hub-0000';
    const saved = await invoke('settings.save', { patch: { providerKey: wrong } });
    expect(saved).toEqual({ ok: true, value: { ok: true } });
    const files = fs.readdirSync(home);
    expect(files).toContain('secrets.keychain.json');
    expect(files).not.toContain('secrets.json');
    expect(fs.readFileSync(path.join(home, 'secrets.keychain.json'), 'utf8')).not.toContain(wrong);
    const settings = await invoke('settings.get', {});
    expect(settings.ok && (settings.value as { keyStorage: string }).keyStorage).toBe('keychain');
    const s = await until('tray auth failed', state, (v) => !!v.tray?.image.endsWith('tray-auth-failed.png'));
    expect(s.tray!.tooltip.length).toBeGreaterThan(0);
    expect(await verdictCode()).toBe('key_refused');
    // Back to the right key: serving again.
    expect(await invoke('settings.save', { patch: { providerKey: KEY } })).toEqual({ ok: true, value: { ok: true } });
    await until('tray serving with the right key', state, (v) => !!v.tray?.image.endsWith('tray-serving.png'), 10_000);
  });

  it('shows alerts as desktop notifications while they are on', async () => {
    // The refused key of the test before raised key_refused.
    await until('a key_refused notification', state, (v) => v.notifications.some((n) => /refused your provider key/.test(n.title)));
    expect(await invoke('alerts.test', {})).toEqual({ ok: true, value: { webhook: 'off' } });
    const shown = await until('the test notification', state, (v) => v.notifications.some((n) => n.title === 'Test alert'));
    expect(shown.notifications.find((n) => n.title === 'Test alert')).toMatchObject({ silent: true, body: expect.stringContaining('test alert') });
    expect(await invoke('settings.save', { patch: { desktopNotifications: false } })).toEqual({ ok: true, value: { ok: true } });
    const count = shown.notifications.length;
    await until(
      'settings applied in main',
      () => invoke('settings.get', {}),
      (r) => r.ok && (r.value as { desktopNotifications: boolean }).desktopNotifications === false,
    );
    await invoke('alerts.test', {});
    expect(await invoke('alerts.list', {})).toMatchObject({ ok: true });
    expect((await state()).notifications.length).toBe(count);
    expect(await invoke('settings.save', { patch: { desktopNotifications: true } })).toEqual({ ok: true, value: { ok: true } });
    expect(await ask('clickNotification', { index: 0 })).toBe(true);
  });

  it('closing the window keeps serving in the tray', async () => {
    expect(await ask('closeWindow')).toBe(false);
    const s = await state();
    expect(s.window).toMatchObject({ visible: false, destroyed: false });
    expect(s.tray!.destroyed).toBe(false);
    expect(hub.providers()[0]!.connected).toBe(true);
  });

  it('Quit from the tray stops the agent and exits cleanly', async () => {
    expect(main.child.exitCode).toBeNull();
    await ask('clickTray', { id: 'quit' });
    expect(await main.exited).toBe(0);
    await until(
      'the hub to see the provider leave',
      async () => hub.providers()[0]?.connected,
      (c) => c === false,
      3000,
    );
  });
});

describe('desktop main process on a brand-new machine', () => {
  let fresh: MainProcess | undefined;
  let freshHome: string;
  afterAll(async () => {
    await fresh?.kill();
  });

  it('writes a default config, starts without a key, falls back to the 0600 file store without a keychain, and asks for the key', async () => {
    freshHome = path.join(work, 'fresh-home');
    fresh = launchMain(freshHome, { FAKE_KEYCHAIN: '0' });
    const p = fresh;
    await until(
      'the tray',
      () => p.ask<FakeState>('state'),
      (v) => !!v.tray,
      8000,
      p,
    );
    expect(fs.readFileSync(path.join(freshHome, 'config.toml'), 'utf8')).toContain('[Inference]');
    // The tray follows the verdict: once the agent runs without a key, "no provider key" in grey.
    await until(
      'the no-key verdict',
      () => p.ask<InvokeReply<{ verdict: { reasons: { code: string }[] } }>>('invoke', { url: appUrl, channel: 'snapshot.get', args: {} }),
      (r) => r.ok && r.value.verdict.reasons[0]?.code === 'no_key',
      8000,
      p,
    );
    const s = await until(
      'the tray without a key',
      () => p.ask<FakeState>('state'),
      (v) => !!v.tray?.image.endsWith('tray-disconnected.png'),
      8000,
      p,
    );
    expect(s.tray!.tooltip).toContain('Swan Provider Console');
    expect(p.output()).toMatch(/The provider key is kept in .*secrets.json .*not in the OS keychain/);
    const snap = await p.ask<InvokeReply<{ hasKey: boolean; onboarded: boolean }>>('invoke', { url: appUrl, channel: 'snapshot.get', args: {} });
    expect(snap).toMatchObject({ ok: true, value: { hasKey: false, onboarded: false } });
    const settings = await p.ask<InvokeReply<{ keyStorage: string; startAtLogin: boolean; closeToTray: boolean }>>('invoke', {
      url: appUrl,
      channel: 'settings.get',
      args: {},
    });
    expect(settings).toMatchObject({ ok: true, value: { keyStorage: 'none', startAtLogin: false, closeToTray: true } });
    await p.ask('quit');
    expect(await p.exited).toBe(0);
  });
});

// electron-updater (the real package) inside the real main bundle, reading a real generic feed from
// 127.0.0.1: latest-linux.yml naming an "AppImage" (a shell script, so installing it can be seen).
describe('desktop updates through electron-updater and a local generic feed', () => {
  const NEW = '99.0.0';
  const channelFile = process.arch === 'x64' ? 'latest-linux.yml' : `latest-linux-${process.arch}.yml`;
  let dir: string;
  let feed: http.Server;
  let feedUrl: string;
  const served: string[] = [];
  let proc: MainProcess | undefined;

  beforeAll(async () => {
    dir = path.join(work, 'updates');
    fs.mkdirSync(dir, { recursive: true });
    const marker = path.join(dir, 'installed-ran.txt');
    const script = Buffer.from(`#!/bin/sh\necho "version ${NEW} ran (silent=$APPIMAGE_SILENT_INSTALL)" >> '${marker}'\n`);
    const sha512 = crypto.createHash('sha512').update(script).digest('base64');
    const appImage = `swan-provider-console-${NEW}.AppImage`;
    const yml = [
      `version: ${NEW}`,
      'files:',
      `  - url: ${appImage}`,
      `    sha512: ${sha512}`,
      `    size: ${script.length}`,
      `path: ${appImage}`,
      `sha512: ${sha512}`,
      "releaseDate: '2026-12-01T00:00:00.000Z'",
      '',
    ].join('\n');
    feed = http.createServer((req, res) => {
      const p = new URL(req.url!, 'http://x').pathname;
      served.push(p);
      if (p === `/feed/${channelFile}`) res.writeHead(200, { 'content-type': 'text/yaml' }).end(yml);
      else if (p === `/feed/${appImage}`) res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': script.length }).end(script);
      else if (p === '/npm.json') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ 'dist-tags': { latest: NEW } }));
      else res.writeHead(404).end('not found');
    });
    feed.listen(0, '127.0.0.1');
    await once(feed, 'listening');
    feedUrl = `http://127.0.0.1:${(feed.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await proc?.kill();
    feed?.close();
  });

  /** A desktop app "installed" as an AppImage (APPIMAGE names the file electron-updater replaces). */
  function launchInstalled(name: string): { p: MainProcess; appImage: string; call: (channel: string, args: unknown) => Promise<InvokeReply<unknown>> } {
    const appImage = path.join(dir, `${name}.AppImage`);
    fs.writeFileSync(appImage, '#!/bin/sh\necho old\n', { mode: 0o755 });
    const p = launchMain(path.join(dir, `${name}-home`), { FAKE_KEYCHAIN: '1', APPIMAGE: appImage, XDG_CACHE_HOME: path.join(dir, 'cache') });
    proc = p;
    return { p, appImage, call: (channel, args) => p.ask<InvokeReply<unknown>>('invoke', { url: appUrl, channel, args }) };
  }

  const downloaded = (r: InvokeReply<unknown>) => r.ok && (r.value as UpdateCheckView).download?.state === 'downloaded';

  it('checks the generic feed without downloading, downloads only when asked, installs at quit only when chosen', async () => {
    const { p, appImage, call } = launchInstalled('first');
    await until(
      'the tray',
      () => p.ask<FakeState>('state'),
      (v) => !!v.tray,
      8000,
      p,
    );
    expect(await call('update.download', {})).toMatchObject({ ok: false, code: 'not_ready', error: expect.stringMatching(/^Check for updates first/) });

    // A folder with no latest.yml, then npm-style metadata (the plain check: no download offered).
    expect(await call('settings.save', { patch: { updateFeedUrl: `${feedUrl}/nothing/` } })).toEqual({ ok: true, value: { ok: true } });
    expect(await call('update.check', {})).toMatchObject({ ok: true, value: { available: false, error: expect.stringContaining('no latest.yml') } });
    await call('settings.save', { patch: { updateFeedUrl: `${feedUrl}/npm.json` } });
    const plain = await call('update.check', {});
    expect(plain).toMatchObject({ ok: true, value: { available: true, latest: NEW } });
    expect(plain.ok && (plain.value as UpdateCheckView).download).toBeUndefined();

    await call('settings.save', { patch: { updateFeedUrl: `${feedUrl}/feed/` } });
    const found = await call('update.check', {});
    expect(found).toEqual({
      ok: true,
      value: expect.objectContaining({ available: true, latest: NEW, download: { state: 'available', version: NEW, installOnQuit: false } }),
    });
    expect(served).toContain(`/feed/${channelFile}`);
    expect(served.some((s) => s.endsWith('.AppImage'))).toBe(false); // nothing downloaded without consent
    expect((await p.ask<FakeState>('state')).netRequests.some((u) => u.includes(`/feed/${channelFile}`))).toBe(true); // through Electron's net
    expect(await call('update.install', { when: 'on-quit' })).toMatchObject({ ok: false, code: 'not_ready' });
    expect(await call('update.install', { when: 'later' })).toMatchObject({ ok: false, code: 'invalid_args' });

    await p.ask('ready', { url: appUrl });
    expect(await call('update.download', {})).toMatchObject({ ok: true, value: { state: 'downloading', version: NEW } });
    await until('the download', () => call('update.check', {}), downloaded, 10_000, p);
    expect(served).toContain(`/feed/swan-provider-console-${NEW}.AppImage`);
    await until(
      'an update.download push',
      () => p.ask<FakeState>('state'),
      (s) => s.sent.some((b) => b.types?.includes('update.download')),
      5000,
      p,
    );
    expect(fs.readFileSync(appImage, 'utf8')).toContain('old'); // downloaded, not installed

    expect(await call('update.install', { when: 'on-quit' })).toMatchObject({ ok: true, value: { state: 'downloaded', installOnQuit: true } });
    await p.ask('clickTray', { id: 'quit' });
    expect(await p.exited).toBe(0);
    expect(fs.readFileSync(appImage, 'utf8')).toContain(`version ${NEW} ran`); // the new file took the old one's place
    expect(fs.readFileSync(path.join(dir, 'installed-ran.txt'), 'utf8')).toContain('silent=true');
  });

  it('Restart installs the downloaded version and starts it', async () => {
    fs.rmSync(path.join(dir, 'installed-ran.txt'), { force: true });
    const { p, appImage, call } = launchInstalled('second');
    await until(
      'the tray',
      () => p.ask<FakeState>('state'),
      (v) => !!v.tray,
      8000,
      p,
    );
    await call('settings.save', { patch: { updateFeedUrl: `${feedUrl}/feed/${channelFile}` } }); // a file URL means its folder
    expect(await call('update.check', {})).toMatchObject({ ok: true, value: { available: true, download: { state: 'available' } } });
    await call('update.download', {});
    await until('the download', () => call('update.check', {}), downloaded, 10_000, p);
    expect(await call('update.install', { when: 'now' })).toMatchObject({ ok: true, value: { state: 'downloaded' } });
    expect(await p.exited).toBe(0);
    expect(fs.readFileSync(appImage, 'utf8')).toContain(`version ${NEW} ran`);
    // Started detached after the swap, once this one had let go of the single-instance lock.
    await until(
      'the new version to run',
      async () => fs.existsSync(path.join(dir, 'installed-ran.txt')) && fs.readFileSync(path.join(dir, 'installed-ran.txt'), 'utf8'),
      (t) => !!t && t.includes('silent=true'),
      5000,
      p,
    );
  });
});
