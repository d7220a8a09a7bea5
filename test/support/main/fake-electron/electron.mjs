// A stand-in for the Electron main-process API, so the real built main bundle (out/main/index.js) runs in
// plain Node where no Electron binary exists. It records what main does with windows, tray, IPC and
// sessions, and takes commands from the test over the child-process channel. Only what main uses.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';

/** The project folder: what Electron's app.getAppPath() gives for `electron .` (package.json, dev-app-update.yml). */
const APP_PATH = new URL('../../../../', import.meta.url).pathname.replace(/\/$/, '');
const PACKAGE = JSON.parse(fs.readFileSync(`${APP_PATH}/package.json`, 'utf8'));

const record = {
  lockRequested: false,
  userData: '',
  windows: [],
  tray: null,
  ipcHandlers: new Map(),
  ipcListeners: new Map(),
  sent: [],
  csp: null,
  permissionHandler: null,
  contentsHandlers: [],
  loginItem: null,
  errorBox: null,
  openedExternal: [],
  notifications: [],
  netRequests: [],
  lockReleased: false,
};

class Emitter extends EventEmitter {}

export const app = new (class extends Emitter {
  isPackaged = false;
  requestSingleInstanceLock() {
    record.lockRequested = true;
    return true;
  }
  setPath(name, value) {
    if (name === 'userData') record.userData = value;
  }
  getPath(name) {
    if (name === 'userData') return record.userData;
    throw new Error(`fake electron: getPath(${name})`);
  }
  setAppUserModelId() {}
  getVersion() {
    return PACKAGE.version;
  }
  getName() {
    return PACKAGE.name;
  }
  getAppPath() {
    return APP_PATH;
  }
  releaseSingleInstanceLock() {
    record.lockReleased = true;
  }
  relaunch() {}
  whenReady() {
    return Promise.resolve();
  }
  getLoginItemSettings() {
    return { openAtLogin: false, wasOpenedAtLogin: false };
  }
  setLoginItemSettings(s) {
    record.loginItem = s;
  }
  quit() {
    this.emit('before-quit', { preventDefault() {} });
    let prevented = false;
    this.emit('will-quit', { preventDefault: () => (prevented = true) });
    if (prevented) return;
    this.emit('quit', { preventDefault() {} }, 0);
    setImmediate(() => process.exit(0));
  }
  exit(code = 0) {
    process.exit(code);
  }
})();

let nextContentsId = 1;
class WebContents extends Emitter {
  id = nextContentsId++;
  url = '';
  destroyed = false;
  send(channel, payload) {
    record.sent.push({ channel, payload });
  }
  isDestroyed() {
    return this.destroyed;
  }
  getURL() {
    return this.url;
  }
  setWindowOpenHandler(fn) {
    this.windowOpenHandler = fn;
  }
}

export class BrowserWindow extends Emitter {
  static all = [];
  static getAllWindows() {
    return BrowserWindow.all.filter((w) => !w.destroyed);
  }
  constructor(options) {
    super();
    this.options = options;
    this.visible = false;
    this.destroyed = false;
    this.webContents = new WebContents();
    BrowserWindow.all.push(this);
    record.windows.push(this);
    app.emit('web-contents-created', {}, this.webContents);
  }
  async loadFile(file) {
    this.webContents.url = new URL(`file://${file}`).href;
    this.loaded = file;
    this.webContents.emit('did-start-loading');
    this.emit('ready-to-show');
  }
  async loadURL(url) {
    this.webContents.url = url;
    this.loaded = url;
    this.emit('ready-to-show');
  }
  show() {
    this.visible = true;
  }
  hide() {
    this.visible = false;
  }
  focus() {}
  restore() {}
  isMinimized() {
    return false;
  }
  isDestroyed() {
    return this.destroyed;
  }
  /** What a click on the window's close button does. */
  close() {
    let prevented = false;
    this.emit('close', { preventDefault: () => (prevented = true) });
    if (prevented) return false;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    if (BrowserWindow.getAllWindows().length === 0) app.emit('window-all-closed');
    return true;
  }
}

export const ipcMain = {
  handle(channel, fn) {
    if (record.ipcHandlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    record.ipcHandlers.set(channel, fn);
  },
  removeHandler(channel) {
    record.ipcHandlers.delete(channel);
  },
  on(channel, fn) {
    record.ipcListeners.set(channel, fn);
  },
  removeListener(channel, fn) {
    if (record.ipcListeners.get(channel) === fn) record.ipcListeners.delete(channel);
  },
};

export const session = {
  defaultSession: {
    webRequest: {
      onHeadersReceived(fn) {
        fn({ responseHeaders: { 'content-type': ['text/html'] } }, (r) => (record.csp = r.responseHeaders['Content-Security-Policy']?.[0] ?? null));
      },
    },
    setPermissionRequestHandler(fn) {
      record.permissionHandler = fn;
    },
    setPermissionCheckHandler() {},
  },
  fromPartition(partition) {
    return { partition };
  },
};

// Electron's net.request (ClientRequest): options { method, protocol, hostname, port, path, headers,
// redirect: 'follow' | 'error' | 'manual' }; events 'response' (IncomingMessage: statusCode,
// statusMessage, headers, data/end), 'redirect' (statusCode, method, url, headers) under 'manual',
// 'error', 'abort'; end(), abort(), followRedirect(), setHeader(). Done here with Node's http client.
class ClientRequest extends Emitter {
  constructor(options) {
    super();
    this.options = options;
    this.headers = { ...(options.headers ?? {}) };
    this.aborted = false;
  }
  setHeader(name, value) {
    this.headers[name] = value;
  }
  end(data) {
    const o = this.options;
    const mod = o.protocol === 'https:' ? https : http;
    const req = mod.request({ method: o.method ?? 'GET', hostname: o.hostname, port: o.port, path: o.path, headers: this.headers });
    this.req = req;
    req.on('response', (res) => {
      if (this.aborted) return res.resume();
      const location = res.headers.location;
      if (res.statusCode >= 300 && res.statusCode < 400 && location && o.redirect === 'manual') {
        res.resume();
        this.emit('redirect', res.statusCode, o.method ?? 'GET', new URL(location, `${o.protocol}//${o.hostname}:${o.port ?? ''}${o.path}`).href, res.headers);
        return;
      }
      this.emit('response', res);
    });
    req.on('error', (err) => {
      if (!this.aborted) this.emit('error', err);
    });
    req.end(data);
  }
  abort() {
    if (this.aborted) return;
    this.aborted = true;
    this.req?.destroy();
    this.emit('abort');
  }
  followRedirect() {
    throw new Error('fake electron: followRedirect is not implemented');
  }
}
export const net = {
  request(options) {
    record.netRequests.push(`${options.protocol}//${options.hostname}:${options.port ?? ''}${options.path}`);
    return new ClientRequest(options);
  },
};
// Electron's own autoUpdater: electron-updater only emits 'before-quit-for-update' on it.
export const autoUpdater = new Emitter();

export const safeStorage = {
  isEncryptionAvailable: () => process.env.FAKE_KEYCHAIN === '1',
  getSelectedStorageBackend: () => (process.env.FAKE_KEYCHAIN === '1' ? 'gnome_libsecret' : 'basic_text'),
  // Reversible but not plain: enough to see that nothing is written in clear.
  encryptString: (s) => Buffer.from(Buffer.from(s, 'utf8').map((b) => b ^ 0x5a)),
  decryptString: (b) => Buffer.from(b.map((x) => x ^ 0x5a)).toString('utf8'),
};

export class Menu {
  static buildFromTemplate(items) {
    return new Menu(items);
  }
  constructor(items) {
    this.items = items;
  }
  getMenuItemById(id) {
    const item = this.items.find((i) => i.id === id);
    return item ? { ...item, click: () => item.click?.() } : null;
  }
}

export class Tray extends Emitter {
  constructor(image) {
    super();
    this.image = image;
    this.destroyed = false;
    record.tray = this;
  }
  setImage(image) {
    this.image = image;
  }
  setToolTip(t) {
    this.tooltip = t;
  }
  setContextMenu(m) {
    this.menu = m;
  }
  isDestroyed() {
    return this.destroyed;
  }
  destroy() {
    this.destroyed = true;
  }
}

export const nativeImage = { createFromPath: (p) => ({ path: p }) };
export const nativeTheme = { shouldUseDarkColors: false, themeSource: 'system' };
export const dialog = {
  showErrorBox(title, text) {
    record.errorBox = { title, text };
    process.send?.({ event: 'error-box', title, text });
  },
};
export const shell = {
  async openExternal(url) {
    record.openedExternal.push(url);
  },
};
// Electron's Notification: static isSupported(); new Notification({ title, body, silent }); show(); 'click'/'close' events.
export class Notification extends Emitter {
  static isSupported() {
    return true;
  }
  constructor(options = {}) {
    super();
    this.options = options;
    this.shown = false;
  }
  show() {
    this.shown = true;
    record.notifications.push(this);
  }
  close() {
    this.emit('close');
  }
}
export const contextBridge = {};
export const ipcRenderer = {};

// ---- the test's remote control ----
const sender = (url) => {
  const win = record.windows[0];
  return { sender: win.webContents, senderFrame: { url, parent: null } };
};

function state() {
  const win = record.windows[0];
  return {
    lockRequested: record.lockRequested,
    userData: record.userData,
    window: win ? { options: win.options, loaded: win.loaded, visible: win.visible, destroyed: win.destroyed, url: win.webContents.url } : null,
    tray: record.tray
      ? {
          image: record.tray.image?.path,
          tooltip: record.tray.tooltip,
          menu: record.tray.menu?.items.map((i) => ({ id: i.id, label: i.label, enabled: i.enabled })),
          destroyed: record.tray.destroyed,
        }
      : null,
    ipcHandlers: [...record.ipcHandlers.keys()],
    ipcListeners: [...record.ipcListeners.keys()],
    sent: record.sent.map((s) => ({ channel: s.channel, types: Array.isArray(s.payload) ? s.payload.map((e) => e.type) : null })),
    csp: record.csp,
    loginItem: record.loginItem,
    errorBox: record.errorBox,
    openedExternal: record.openedExternal,
    netRequests: record.netRequests,
    lockReleased: record.lockReleased,
    notifications: record.notifications.map((n) => ({ title: n.options.title, body: n.options.body, silent: n.options.silent })),
  };
}

const commands = {
  state,
  async invoke({ url, channel, args }) {
    const handler = record.ipcHandlers.get('swan:invoke');
    if (!handler) throw new Error('no swan:invoke handler');
    return handler(sender(url), channel, args);
  },
  ready({ url }) {
    record.ipcListeners.get('swan:ready')?.(sender(url));
    return true;
  },
  clickTray({ id }) {
    const item = record.tray?.menu?.getMenuItemById(id);
    if (!item) throw new Error(`no tray item ${id}`);
    item.click();
    return true;
  },
  closeWindow() {
    return record.windows[0].close();
  },
  reload() {
    record.windows[0].webContents.emit('did-start-loading');
    return true;
  },
  openWindow({ url }) {
    return record.windows[0].webContents.windowOpenHandler?.({ url });
  },
  navigate({ url }) {
    let prevented = false;
    record.windows[0].webContents.emit('will-navigate', { preventDefault: () => (prevented = true) }, url);
    return prevented;
  },
  permission({ name }) {
    return new Promise((resolve) => record.permissionHandler(record.windows[0].webContents, name, resolve));
  },
  clickNotification({ index }) {
    const n = record.notifications[index];
    if (!n) throw new Error(`no notification ${index}`);
    n.emit('click');
    return true;
  },
  quit() {
    app.quit();
    return true;
  },
};

process.on('message', async (msg) => {
  if (!msg || typeof msg !== 'object' || !('cmd' in msg)) return;
  try {
    const value = await commands[msg.cmd](msg.args ?? {});
    process.send?.({ id: msg.id, ok: true, value });
  } catch (err) {
    process.send?.({ id: msg.id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});

export default {
  app,
  BrowserWindow,
  ipcMain,
  session,
  safeStorage,
  Menu,
  Tray,
  nativeImage,
  nativeTheme,
  dialog,
  shell,
  Notification,
  contextBridge,
  ipcRenderer,
  net,
  autoUpdater,
};
