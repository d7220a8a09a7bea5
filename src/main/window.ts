// The one app window: isolated, sandboxed, no Node, web security on.
import path from 'node:path';
import { BrowserWindow, type WebPreferences } from 'electron';
import type { RendererLocation } from './ipc-guard';
import { appPaths } from './paths';

/** What every window of ours runs with; read back by the e2e test. */
export function windowPreferences(): WebPreferences {
  return {
    preload: appPaths.preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
    safeDialogs: true,
  };
}

export function createMainWindow(opts: { show: boolean; dark: boolean }): BrowserWindow {
  const win = new BrowserWindow({
    width: 1280,
    height: 800,
    minWidth: 1024,
    minHeight: 640,
    show: false,
    title: 'Swan Provider Console',
    backgroundColor: opts.dark ? '#0f172a' : '#ffffff',
    icon: path.join(appPaths.resources, 'icon.png'),
    autoHideMenuBar: true,
    webPreferences: windowPreferences(),
  });
  if (opts.show) win.once('ready-to-show', () => win.show());
  return win;
}

export async function loadRenderer(win: BrowserWindow, renderer: RendererLocation): Promise<void> {
  if (renderer.kind === 'dev') await win.loadURL(renderer.url);
  else await win.loadFile(renderer.indexFile);
}

export function reveal(win: BrowserWindow): void {
  if (win.isDestroyed()) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}
