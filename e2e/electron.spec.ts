// The desktop app end to end with Playwright's Electron driver: the built app, a fresh home folder per
// test, the real agent inside it, the dev hub and a test engine in this process. Skipped (with the
// reason) where no Electron binary or no display exists — e.g. the build machine of this project.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, expect, test, type ElectronApplication, type Page } from '@playwright/test';
import { startDevHub, type DevHub, type DevProvider } from '../src/cli/dev-hub';
import type { SwanBridge } from '../src/shared/bridge/transport';
import { startTestEngine, type TestEngine } from '../test/support/engine-server';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const KEY = 'sk-prov-e2e-electron-1234567890';

/** The Electron executable, or why it cannot run. Never `require('electron')`: that downloads it. */
function findElectron(): { exe: string } | { why: string } {
  let pkgDir: string;
  try {
    pkgDir = path.dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return { why: 'the electron package is not installed' };
  }
  const pathFile = path.join(pkgDir, 'path.txt');
  const name = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : '';
  const exe = name ? path.join(pkgDir, 'dist', name) : '';
  if (!exe || !fs.existsSync(exe)) return { why: 'no Electron binary (node_modules/electron/dist is missing)' };
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return { why: 'no display (run under xvfb-run)' };
  return { exe };
}

const found = findElectron();
test.skip('why' in found, `Electron cannot run here: ${'why' in found ? found.why : ''}`);
// One worker, in order (they share the build in out/), each test on its own app, home, hub and engine.
test.describe.configure({ mode: 'default' });

interface TrayView {
  state: 'serving' | 'paused' | 'disconnected' | 'auth_failed';
  tooltip: string;
  status: string;
  action: 'pause' | 'resume';
}
/** What src/main/index.ts exposes when SWAN_E2E=1. */
interface DesktopHook {
  tray(): TrayView | undefined;
  clickTray(id: string): void;
  webPreferences(): Record<string, unknown>;
  home: string;
}

interface Rig {
  app: ElectronApplication;
  page: Page;
  hub: DevHub;
  engine: TestEngine;
  home: string;
  close(): Promise<void>;
}

/** Hub + engine + a home folder whose config points at them, then the app on that home. */
async function launch(opts: { withKey: boolean; env?: Record<string, string> }): Promise<Rig> {
  const engine = await startTestEngine({});
  const hub = await startDevHub({ token: KEY });
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-electron-e2e-'));
  fs.writeFileSync(path.join(home, 'models.json'), JSON.stringify(Object.fromEntries(engine.modelIds.map((id) => [id, { endpoint: engine.url }])), null, 2));
  fs.writeFileSync(
    path.join(home, 'config.toml'),
    [
      '[API]',
      'NodeName = "electron-e2e"',
      '[Inference]',
      `WebSocketURL = "${hub.wsUrl}"`,
      `ServiceURL = "${hub.url}"`,
      ...(opts.withKey ? [`ApiKey = "${KEY}"`] : []),
      '[Agent]',
      'Discovery = false',
      'HeartbeatIntervalSeconds = 0.5',
      'HealthCheckIntervalSeconds = 0.2',
      'ReconnectMaxBackoffSeconds = 0.5',
      '',
    ].join('\n'),
  );
  const args = [root];
  // Chromium refuses to start as root with its OS sandbox (CI containers); the page sandbox still applies.
  if (process.getuid?.() === 0) args.push('--no-sandbox');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'ELECTRON_RUN_AS_NODE') env[k] = v;
  const app = await electron.launch({
    executablePath: (found as { exe: string }).exe,
    args,
    cwd: root,
    env: { ...env, SWAN_HOME: home, SWAN_E2E: '1', ...opts.env },
    timeout: 30_000,
  });
  const page = await app.firstWindow();
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(page.locator('[data-app-state="loaded"]')).toBeVisible({ timeout: 20_000 });
  return {
    app,
    page,
    hub,
    engine,
    home,
    async close() {
      await app.close().catch(() => undefined);
      await hub.close();
      await engine.close();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}

type Hooked = { __swanDesktop: DesktopHook };

/** The few page globals the checks touch (this file is compiled without the DOM library). */
interface PageWindow {
  swan?: SwanBridge;
  open(url: string): unknown;
  location: { href: string };
  document: { createElement(tag: 'script'): { textContent: string | null }; head: { append(node: unknown): void } };
  __cspProbe?: number;
}
const trayView = (app: ElectronApplication) => app.evaluate(() => (globalThis as unknown as Hooked).__swanDesktop.tray());
const clickTray = (app: ElectronApplication, id: 'pause' | 'resume') =>
  app.evaluate((_e, item) => (globalThis as unknown as Hooked).__swanDesktop.clickTray(item), id);

/** Resolves with the next register the hub receives from our provider. */
function nextRegister(hub: DevHub): Promise<DevProvider> {
  return once(hub.events, 'register').then(([p]) => p as DevProvider);
}

test.beforeAll(() => {
  // The spec runs the built app: build main, preload and renderer into out/.
  execFileSync(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build'], {
    cwd: root,
    stdio: 'inherit',
    timeout: 180_000,
  });
});

test('the window is isolated, sandboxed, without Node, and cannot navigate or open windows', async ({}, testInfo) => {
  const rig = await launch({ withKey: true });
  try {
    const prefs = await rig.app.evaluate(() => (globalThis as unknown as Hooked).__swanDesktop.webPreferences());
    expect(prefs).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true, webviewTag: false });
    const live = await rig.app.evaluate(({ BrowserWindow }) => {
      const wc = BrowserWindow.getAllWindows()[0]!.webContents as unknown as { getLastWebPreferences?: () => Record<string, unknown> };
      return wc.getLastWebPreferences ? wc.getLastWebPreferences() : null;
    });
    if (live) expect(live).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, webSecurity: true });

    const globals = await rig.page.evaluate(() => {
      const w = globalThis as unknown as Record<string, unknown> & PageWindow;
      return {
        require: typeof w.require,
        process: typeof w.process,
        module: typeof w.module,
        ipcRenderer: typeof w.ipcRenderer,
        swan: Object.keys(w.swan ?? {}).sort(),
        transport: w.swan?.transport,
      };
    });
    expect(globals).toEqual({
      require: 'undefined',
      process: 'undefined',
      module: 'undefined',
      ipcRenderer: 'undefined',
      swan: ['invoke', 'onEvents', 'transport'],
      transport: 'ipc',
    });

    // The CSP refuses inline scripts.
    const inlineRan = await rig.page.evaluate(() => {
      const w = globalThis as unknown as PageWindow;
      const s = w.document.createElement('script');
      s.textContent = 'window.__cspProbe = 1';
      w.document.head.append(s);
      return w.__cspProbe === 1;
    });
    expect(inlineRan).toBe(false);

    // New windows are denied; non-http(s) targets are not handed to the OS either.
    const appUrl = rig.page.url();
    const opened = await rig.page.evaluate(() => (globalThis as unknown as PageWindow).open('file:///etc/hostname') === null);
    expect(opened).toBe(true);
    await rig.page.evaluate(() => {
      (globalThis as unknown as PageWindow).location.href = 'file:///etc/hostname';
    });
    await expect
      .poll(
        async () =>
          (await rig.page.evaluate(() => (globalThis as unknown as PageWindow).swan!.invoke('logs.list', { level: 'warn', limit: 200 })))
            .map((e) => e.msg)
            .filter((m) => m.startsWith('Blocked opening file:///etc/hostname')).length,
        { timeout: 5_000 },
      )
      .toBe(2);
    expect(rig.page.url()).toBe(appUrl);
    expect(rig.app.windows()).toHaveLength(1);

    // An unknown channel and bad arguments come back as errors with text, not crashes.
    const errors = await rig.page.evaluate(async () => {
      const bridge = (globalThis as unknown as PageWindow).swan!;
      const unknown = await (bridge.invoke as (c: string, a: unknown) => Promise<unknown>)('fs.readFile', {}).catch((e: Error) => e.message);
      const bad = await bridge.invoke('gpu.history', { minutes: 999 }).catch((e: Error) => e.message);
      return { unknown, bad };
    });
    expect(errors.unknown).toMatch(/^Unknown action/);
    expect(errors.bad).toMatch(/^Invalid arguments for gpu\.history: minutes/);
    await rig.page.screenshot({ path: testInfo.outputPath('electron-dashboard.png') });
  } finally {
    await rig.close();
  }
});

test('first run: the key is checked with the hub, a model is picked, serving starts', async ({}, testInfo) => {
  const rig = await launch({ withKey: false });
  try {
    const { page } = rig;
    await expect(page.getByTestId('app')).toHaveAttribute('data-onboarding', 'yes');
    await expect(page.getByTestId('page-onboarding')).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('electron-onboarding.png') });
    await expect.poll(() => trayView(rig.app).then((v) => v?.state)).toBe('disconnected');

    await page.getByTestId('network-save').click();
    await page.getByTestId('key-input').fill('sk-not-the-key');
    await page.getByTestId('key-check').click();
    await expect(page.getByTestId('key-field-error')).toBeVisible();

    const registered = nextRegister(rig.hub);
    await page.getByTestId('key-input').fill(KEY);
    await page.getByTestId('key-check').click();
    await expect(page.getByTestId('key-valid')).toBeVisible();
    expect((await registered).models.length).toBeGreaterThan(0);
    // The key went to the keychain store or, without one (Playwright runs Chromium with a mock
    // keychain), the 0600 file — never into config.toml.
    expect(fs.readFileSync(path.join(rig.home, 'config.toml'), 'utf8')).not.toContain(KEY);

    await page.getByTestId('key-continue').click();
    await expect(page.locator('[data-testid^="pick-"]').first()).toBeVisible();
    await page.getByTestId('serve-continue').click();
    await page.getByTestId('onboarding-go').click();
    await expect(page.getByTestId('page-dashboard')).toBeVisible();
    await expect.poll(() => trayView(rig.app).then((v) => v?.state), { timeout: 10_000 }).toBe('serving');
  } finally {
    await rig.close();
  }
});

test('a model toggle reaches the hub as a new register; the tray pauses and resumes serving', async ({}, testInfo) => {
  const rig = await launch({ withKey: true });
  try {
    const { page, hub, engine } = rig;
    await expect(page.getByTestId('page-dashboard')).toBeVisible();
    await expect.poll(() => hub.providers()[0]?.connected ?? false, { timeout: 10_000 }).toBe(true);
    const model = engine.modelIds[0]!;
    await expect.poll(() => hub.providers()[0]?.models ?? []).toContain(model);

    const afterToggle = nextRegister(hub);
    const toggle = page.getByRole('switch', { name: `Serve ${model}` });
    await toggle.uncheck();
    expect((await afterToggle).models).not.toContain(model);
    await expect(page.locator('tr', { has: toggle })).toHaveAttribute('data-enabled', 'false');

    await expect.poll(() => trayView(rig.app).then((v) => v?.state), { timeout: 10_000 }).toBe('serving');
    const paused = nextRegister(hub);
    await clickTray(rig.app, 'pause');
    await expect.poll(() => trayView(rig.app)).toMatchObject({ state: 'paused', action: 'resume' });
    expect((await paused).models).toEqual([]);
    await expect(page.getByTestId('resume-button')).toBeVisible();
    await page.screenshot({ path: testInfo.outputPath('electron-paused.png') });

    await clickTray(rig.app, 'resume');
    await expect.poll(() => trayView(rig.app)).toMatchObject({ state: 'serving', action: 'pause' });
    await expect(page.getByTestId('pause-button')).toBeVisible();
  } finally {
    await rig.close();
  }
});

test('Settings → About: electron-updater finds a version in a local generic feed, downloads it on Download, installs it at quit when chosen', async () => {
  test.skip(process.platform !== 'linux', 'the install step checked here is the AppImage one (Linux)');
  const NEW = '99.0.0';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-electron-update-'));
  const appImage = path.join(dir, 'SwanProviderConsole.AppImage');
  fs.writeFileSync(appImage, '#!/bin/sh\necho old\n', { mode: 0o755 });
  const script = Buffer.from(`#!/bin/sh\necho "version ${NEW}" > '${path.join(dir, 'ran.txt')}'\n`);
  const sha512 = crypto.createHash('sha512').update(script).digest('base64');
  const file = `swan-provider-console-${NEW}.AppImage`;
  const channel = process.arch === 'x64' ? 'latest-linux.yml' : `latest-linux-${process.arch}.yml`;
  const served: string[] = [];
  const feed = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    served.push(p);
    if (p === `/${channel}`)
      res.end(
        [`version: ${NEW}`, 'files:', `  - url: ${file}`, `    sha512: ${sha512}`, `    size: ${script.length}`, `path: ${file}`, `sha512: ${sha512}`, ''].join(
          '\n',
        ),
      );
    else if (p === `/${file}`) res.writeHead(200, { 'content-length': script.length }).end(script);
    else res.writeHead(404).end();
  });
  feed.listen(0, '127.0.0.1');
  await once(feed, 'listening');
  const rig = await launch({ withKey: true, env: { APPIMAGE: appImage, XDG_CACHE_HOME: path.join(dir, 'cache') } });
  try {
    const { page } = rig;
    await page.getByTestId('nav-settings').click();
    const card = page.getByTestId('about-card');
    await card.getByTestId('input-updateFeedUrl').fill(`http://127.0.0.1:${(feed.address() as AddressInfo).port}/`);
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('update-latest')).toHaveText(NEW);
    await expect(card.getByTestId('update-download')).toHaveAttribute('data-state', 'available');
    expect(served.some((p) => p.endsWith('.AppImage'))).toBe(false);
    await card.getByTestId('update-download-start').click();
    await expect(card.getByTestId('update-download')).toHaveAttribute('data-state', 'downloaded', { timeout: 15_000 });
    expect(fs.readFileSync(appImage, 'utf8')).toContain('old');
    await card.getByTestId('update-install-on-quit').click();
    await expect(card.getByTestId('update-install-on-quit')).toHaveCount(0);
  } finally {
    await rig.close();
    feed.close();
  }
  expect(fs.readFileSync(appImage, 'utf8')).toContain(`version ${NEW}`);
  fs.rmSync(dir, { recursive: true, force: true });
});
