// The desktop app's install of a verified release file, after the agent stopped: the plan for each kind of
// install, the AppImage replaced in one rename (the old one kept whole on failure), and the owner's choice
// recorded only for a verified file, never "now" while a request holds it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { installPlan, replaceAppImage } from '../../../src/core/update/install';
import { Updates } from '../../../src/core/update/updates';
import { BridgeError } from '../../../src/shared/bridge-error';
import { GithubReleasesStandIn } from '../../support/github-releases';

let dir = '';
let gh: GithubReleasesStandIn | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = '';
});

describe('installPlan', () => {
  it('replaces the running AppImage, runs a Windows installer silently, and says when it cannot', () => {
    expect(installPlan('/h/updates/app-1.0.0.AppImage', { platform: 'linux', env: { APPIMAGE: '/opt/app.AppImage' } })).toEqual({
      kind: 'replace_appimage',
      file: '/h/updates/app-1.0.0.AppImage',
      target: '/opt/app.AppImage',
    });
    expect(installPlan('/h/updates/app-1.0.0.AppImage', { platform: 'linux', env: {} }).kind).toBe('manual');
    expect(installPlan('/h/updates/app-1.0.0.AppImage', { platform: 'linux', env: { APPIMAGE: 'relative.AppImage' } }).kind).toBe('manual');
    expect(installPlan('C:\\u\\Setup 1.0.0.exe', { platform: 'win32', env: {} })).toMatchObject({ kind: 'run_installer', args: ['/S'] });
    expect(installPlan('/h/updates/app-1.0.0.dmg', { platform: 'darwin', env: {} }).kind).toBe('manual');
  });
});

describe('replaceAppImage', () => {
  it('puts the verified file in place, executable, in one rename', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-install-'));
    const target = path.join(dir, 'app.AppImage');
    const file = path.join(dir, 'new.AppImage');
    fs.writeFileSync(target, 'old version');
    fs.writeFileSync(file, 'new version', { mode: 0o600 });
    replaceAppImage(file, target);
    expect(fs.readFileSync(target, 'utf8')).toBe('new version');
    expect(fs.statSync(target).mode & 0o777).toBe(0o755);
    expect(fs.existsSync(`${target}.new`)).toBe(false);
  });

  it('leaves the old AppImage whole when the new one cannot be put in place', () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-install-'));
    const target = path.join(dir, 'app.AppImage');
    fs.writeFileSync(target, 'old version');
    expect(() => replaceAppImage(path.join(dir, 'missing.AppImage'), target)).toThrow();
    expect(fs.readFileSync(target, 'utf8')).toBe('old version');
    expect(fs.readdirSync(dir)).toEqual(['app.AppImage']);
  });
});

describe("the owner's choice to install (desktop)", () => {
  it('is refused, with the file named, where this copy cannot install it (not run from an AppImage)', async () => {
    gh = await GithubReleasesStandIn.start({ tag: 'v0.9.0', assets: [{ name: 'swan-provider-console-0.9.0-x86_64.AppImage', data: Buffer.from('x') }] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-install-'));
    const u = new Updates({
      dir: path.join(dir, 'updates'),
      mode: 'desktop',
      current: '0.1.0',
      feed: () => gh!.feed,
      inFlight: () => 0,
      drained: () => Promise.resolve(),
      log: memoryLog().child('update'),
      installTarget: { platform: 'linux', env: {} },
    });
    await u.check();
    u.startDownload();
    const ready = await u.whenReady();
    expect(() => u.markInstall('on-quit')).toThrow(/cannot install version 0.9.0 itself/);
    expect(u.chosenInstall()).toBeUndefined();
    expect(ready.state).toBe('ready');
  });

  it('is taken only for a verified file; "now" waits while a request holds it; the chosen file is named once ready', async () => {
    const appImage = Buffer.from('new appimage '.repeat(100));
    gh = await GithubReleasesStandIn.start({ tag: 'v0.9.0', assets: [{ name: 'swan-provider-console-0.9.0-x86_64.AppImage', data: appImage }] });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-install-'));
    let release!: () => void;
    const drained = new Promise<void>((r) => (release = r));
    let inFlight = 1;
    const u = new Updates({
      dir: path.join(dir, 'updates'),
      mode: 'desktop',
      current: '0.1.0',
      feed: () => gh!.feed,
      inFlight: () => inFlight,
      drained: () => drained,
      log: memoryLog().child('update'),
      installTarget: { platform: 'linux', env: { APPIMAGE: path.join(dir, 'running.AppImage') } },
    });
    expect(() => u.markInstall('on-quit')).toThrow(BridgeError);
    await u.check();
    u.startDownload();
    await new Promise<void>((r) => (u.download()?.state === 'held' ? r() : u.on('download', (d) => d.state === 'held' && r())));
    expect(() => u.markInstall('now')).toThrow(/in flight/);
    expect(u.markInstall('on-quit')).toMatchObject({ state: 'held', installOnQuit: true });
    expect(u.chosenInstall()).toBeUndefined();
    inFlight = 0;
    release();
    const ready = await u.whenReady();
    expect(ready).toMatchObject({ state: 'ready', installOnQuit: true });
    expect(u.chosenInstall()).toEqual({ version: '0.9.0', file: ready.file });
    expect(fs.readFileSync(ready.file!)).toEqual(appImage);
  });
});
