// The real built main bundle (src/main -> out/main/index.js, with the real Agent inside) running in a
// child Node process where a stand-in answers for the Electron API (test/support/main/fake-electron). The dev hub
// and a test engine run here. This covers what the Electron e2e covers where no Electron binary exists:
// the window's settings, IPC sender checks, pushes after ready, the tray following the agent, close to
// tray, the keychain store, and a clean quit.
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevHub, type DevHub, type DevProvider } from '../../../src/cli/dev-hub';
import type { InvokeReply } from '../../../src/shared/bridge';
import { startTestEngine, type TestEngine } from '../../support/engine-server';

const root = path.resolve(__dirname, '../../..');
const KEY = 'sk-prov-main-test-1234567890';

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
  window: { options: { webPreferences: Record<string, unknown>; minWidth: number; minHeight: number }; loaded: string; visible: boolean; destroyed: boolean; url: string } | null;
  tray: { image: string; tooltip: string; menu: { id: string; label: string; enabled?: boolean }[]; destroyed: boolean } | null;
  ipcHandlers: string[];
  ipcListeners: string[];
  sent: { channel: string; types: string[] | null }[];
  csp: string | null;
  loginItem: unknown;
  errorBox: unknown;
  openedExternal: string[];
  notifications: { title: string; body: string; silent: boolean }[];
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
          reject(new Error(`no answer to ${cmd} within 5 s; app output:\n${output.slice(-3000)}`));
        }, 5000);
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

/** Bounded polling where the app offers no event to wait on. */
async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 8000, proc: MainProcess = main): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(last)?.slice(0, 500)}\napp output:\n${proc.output().slice(-3000)}`);
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
  hub = await startDevHub({ token: KEY });
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(Object.fromEntries(engine.modelIds.map((id) => [id, { endpoint: engine.url }]))));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      'NodeName = "smoke"',
      '[Inference]',
      `WebSocketURL = "${hub.wsUrl}"`,
      `ServiceURL = "${hub.url}"`,
      `ApiKey = "${KEY}"`,
      '[Agent]',
      'Discovery = false',
      'HeartbeatIntervalSeconds = 0.3',
      'HealthCheckIntervalSeconds = 0.1',
      'ReconnectMaxBackoffSeconds = 0.2',
      '',
    ].join('\n'),
  );

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
    expect(await invoke('snapshot.get', {}, 'https://evil.example/')).toEqual({ ok: false, error: 'Refused: this page is not allowed to talk to the agent.' });
    expect(await invoke('snapshot.get', {}, pathToFileURL(path.join(outDir, 'renderer', 'other.html')).href)).toMatchObject({ ok: false });
    const unknown = await invoke('shell.exec', { cmd: 'id' });
    expect(!unknown.ok && unknown.error).toMatch(/^Unknown action/);
    const bad = await invoke('models.setLimits', { model: 'x', maxConcurrent: -1, maxQueue: 0 });
    expect(!bad.ok && bad.error).toMatch(/maxConcurrent/);
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
    const model = engine.modelIds[0]!;
    await until('the hub to see the provider', async () => hub.providers()[0], (p) => !!p?.connected && p.models.includes(model));
    const serving = await until('tray serving', state, (v) => v.tray?.tooltip === 'Swan Provider Console: Serving the Swan network');
    expect(serving.tray!.image).toMatch(/tray-serving\.png$/);
    expect(serving.tray!.menu.map((i) => i.id)).toEqual(['status', undefined, 'pause', 'open', undefined, 'quit']);

    const paused = nextRegister();
    await ask('clickTray', { id: 'pause' });
    expect((await paused).models).toEqual([]);
    const p = await until('tray paused', state, (v) => !!v.tray?.image.endsWith('tray-paused.png'));
    expect(p.tray!.tooltip).toBe('Swan Provider Console: Paused: paused from the tray');
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
    expect(s.tray!.tooltip).toMatch(/refused the provider key/);
    // Back to the right key: serving again.
    expect(await invoke('settings.save', { patch: { providerKey: KEY } })).toEqual({ ok: true, value: { ok: true } });
    await until('tray serving with the right key', state, (v) => !!v.tray?.image.endsWith('tray-serving.png'), 10_000);
  });

  it('shows alerts as desktop notifications while they are on', async () => {
    // The refused key of the test before raised key_refused.
    await until('a key_refused notification', state, (v) => v.notifications.some((n) => n.title === 'The hub refused your provider key'));
    expect(await invoke('alerts.test', {})).toEqual({ ok: true, value: { webhook: 'off' } });
    const shown = await until('the test notification', state, (v) => v.notifications.some((n) => n.title === 'Test alert'));
    expect(shown.notifications.find((n) => n.title === 'Test alert')).toMatchObject({ silent: true, body: expect.stringContaining('test alert') });
    expect(await invoke('settings.save', { patch: { desktopNotifications: false } })).toEqual({ ok: true, value: { ok: true } });
    const count = shown.notifications.length;
    await until('settings applied in main', () => invoke('settings.get', {}), (r) => r.ok && (r.value as { desktopNotifications: boolean }).desktopNotifications === false);
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
    await until('the hub to see the provider leave', async () => hub.providers()[0]?.connected, (c) => c === false, 3000);
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
    const s = await until('the tray', () => p.ask<FakeState>('state'), (v) => !!v.tray, 8000, p);
    expect(fs.readFileSync(path.join(freshHome, 'config.toml'), 'utf8')).toContain('[Inference]');
    expect(s.tray!.image).toMatch(/tray-disconnected\.png$/);
    expect(s.tray!.tooltip).toMatch(/add your provider key/);
    expect(p.output()).toMatch(/The provider key is kept in .*secrets.json .*not in the OS keychain/);
    const snap = await p.ask<InvokeReply<{ hasKey: boolean; onboarded: boolean }>>('invoke', { url: appUrl, channel: 'snapshot.get', args: {} });
    expect(snap).toMatchObject({ ok: true, value: { hasKey: false, onboarded: false } });
    const settings = await p.ask<InvokeReply<{ keyStorage: string; startAtLogin: boolean; closeToTray: boolean }>>('invoke', { url: appUrl, channel: 'settings.get', args: {} });
    expect(settings).toMatchObject({ ok: true, value: { keyStorage: 'none', startAtLogin: false, closeToTray: true } });
    await p.ask('quit');
    expect(await p.exited).toBe(0);
  });
});
