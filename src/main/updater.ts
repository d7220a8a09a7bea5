// Desktop updates through electron-updater, only where the owner set a generic feed (a folder holding
// latest.yml / latest-linux.yml / latest-mac.yml, as electron-builder writes them). Nothing moves without
// the owner: a check only reads the feed (autoDownload off); the download starts when they press
// Download; the install happens when they press Restart, or at quit if they chose "install when I quit"
// (autoInstallOnAppQuit stays off: main does it after the agent has stopped). Every other feed (npm's
// metadata, the default) keeps the agent's plain check (src/core/update/check.ts).
import type { AppUpdater, ProgressInfo, UpdateInfo } from 'electron-updater';
import type { Logger } from '../core/base/log';
import { genericFeedFolder } from '../core/update/check';
import { BridgeError } from '../shared/bridge-error';
import type { UpdateCheckView, UpdateDownloadView } from '../shared/views/settings';

export interface DesktopUpdaterOptions {
  /** The running version (app.getVersion()). */
  current: string;
  /** Unpackaged builds (npm run dev, tests) read dev-app-update.yml beside package.json. */
  packaged: boolean;
  log: Logger;
  /** Loads electron-updater's autoUpdater on first use (no module work or network at start). */
  load?: () => Promise<AppUpdater>;
}

async function loadAutoUpdater(): Promise<AppUpdater> {
  // electron-updater is CommonJS; its autoUpdater is a getter Node's named-export detection misses.
  const mod = (await import('electron-updater')) as unknown as { default: { autoUpdater: AppUpdater } };
  return mod.default.autoUpdater;
}

/** One short line from electron-updater's errors (they carry stacks and response headers). */
export function updaterErrorText(err: unknown): string {
  const e = err as { code?: string; statusCode?: number; message?: string };
  if (e?.code === 'ERR_UPDATER_CHANNEL_FILE_NOT_FOUND') return 'the feed folder has no latest.yml for this system';
  if (typeof e?.statusCode === 'number') return `the feed answered HTTP ${e.statusCode}`;
  if (e?.code === 'ECONNREFUSED') return 'nothing answers at the feed address';
  if (e?.code === 'ERR_CHECKSUM_MISMATCH' || /checksum mismatch/i.test(e?.message ?? ''))
    return 'the downloaded file does not match the feed’s checksum, so it was thrown away';
  const line = (e?.message ?? String(err)).split('\n')[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

export class DesktopUpdater {
  private updater?: AppUpdater;
  private folder?: string;
  private state?: UpdateDownloadView;
  private readonly listeners = new Set<(d: UpdateDownloadView) => void>();

  constructor(private readonly o: DesktopUpdaterOptions) {}

  /** The owner chose "install when I quit" and a downloaded version waits. */
  get installOnQuit(): boolean {
    return this.state?.state === 'downloaded' && this.state.installOnQuit;
  }

  subscribe(cb: (d: UpdateDownloadView) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** The check for a generic feed, or undefined when the feed is not one (the caller asks the agent). */
  async check(feed: string): Promise<UpdateCheckView | undefined> {
    const folder = genericFeedFolder(feed);
    if (!folder) return undefined;
    const base: UpdateCheckView = { current: this.o.current, feed, checkedAt: Date.now(), available: false };
    try {
      const u = await this.instance();
      if (folder !== this.folder) {
        u.setFeedURL({ provider: 'generic', url: folder });
        this.folder = folder;
        this.state = undefined;
      }
      const r = await u.checkForUpdates();
      if (!r) throw new Error('this build cannot update itself (run the installed app, not a development copy)');
      const latest = r.updateInfo.version;
      if (!r.isUpdateAvailable) {
        if (this.state?.state !== 'downloading') this.state = undefined;
        return { ...base, latest };
      }
      if (this.state?.version !== latest || this.state.state === 'error') this.set({ state: 'available', version: latest, installOnQuit: false });
      return { ...base, latest, available: true, download: this.state };
    } catch (err) {
      return { ...base, error: `Could not check for updates: ${updaterErrorText(err)}. Check the feed address in Settings or try again later.` };
    }
  }

  /** Starts the download the owner asked for; progress and the end arrive as update.download events. */
  download(): UpdateDownloadView {
    const s = this.state;
    if (!s || !this.updater) throw new BridgeError('not_ready', 'Check for updates first: there is no newer version to download yet.');
    if (s.state === 'downloading' || s.state === 'downloaded') return s;
    const version = s.version;
    this.set({ state: 'downloading', version, percent: 0, installOnQuit: false });
    this.o.log.info(`Downloading version ${version}, as the owner asked.`);
    this.updater.downloadUpdate().then(
      () => {
        if (this.state?.version === version && this.state.state === 'downloading') this.set({ state: 'downloaded', version, installOnQuit: false });
      },
      (err: unknown) => {
        const why = updaterErrorText(err);
        this.o.log.warn(`The download of version ${version} failed: ${why}`);
        this.set({ state: 'error', version, installOnQuit: false, error: `The download failed: ${why}. Press Download to try again.` });
      },
    );
    return this.state!;
  }

  /** 'on-quit' marks the downloaded version for the next quit; 'now' is the caller's to run (installAndQuit). */
  markInstall(when: 'now' | 'on-quit'): UpdateDownloadView {
    const s = this.state;
    if (s?.state !== 'downloaded') throw new BridgeError('not_ready', 'Download the new version first; nothing has been downloaded.');
    if (when === 'on-quit' && !s.installOnQuit) {
      this.set({ ...s, installOnQuit: true });
      this.o.log.info(`Version ${s.version} will be installed when the app quits, as the owner asked.`);
    }
    return this.state!;
  }

  /**
   * Runs the downloaded installer (after the agent has stopped), then quits: `restart` starts the new
   * version when it is in place. Returns false when nothing was installed (the caller quits as usual).
   */
  installAndQuit(restart: boolean): boolean {
    const u = this.updater as (AppUpdater & { install?: (silent: boolean, runAfter: boolean) => boolean }) | undefined;
    if (!u || this.state?.state !== 'downloaded') return false;
    this.o.log.info(`Installing version ${this.state.version}${restart ? ' and restarting' : ''}.`);
    if (typeof u.install !== 'function') {
      u.quitAndInstall(!restart, restart); // macOS: Squirrel installs and quits
      return true;
    }
    const ok = u.install(!restart, restart);
    if (!ok) this.o.log.warn('The update could not be installed; see the lines above.');
    return ok;
  }

  private async instance(): Promise<AppUpdater> {
    if (this.updater) return this.updater;
    const u = await (this.o.load ?? loadAutoUpdater)();
    u.autoDownload = false;
    u.autoInstallOnAppQuit = false;
    u.allowDowngrade = false;
    u.forceDevUpdateConfig = !this.o.packaged;
    const l = this.o.log;
    u.logger = {
      info: (m: unknown) => l.debug(String(m)),
      warn: (m: unknown) => l.warn(String(m)),
      error: (m: unknown) => l.debug(`electron-updater: ${String(m).split('\n')[0]}`),
    };
    u.on('download-progress', (p: ProgressInfo) => {
      const s = this.state;
      if (s?.state === 'downloading') this.set({ ...s, percent: Math.min(100, Math.floor(p.percent)) });
    });
    u.on('update-downloaded', (info: UpdateInfo) => {
      if (this.state?.version === info.version && this.state.state === 'downloading')
        this.set({ state: 'downloaded', version: info.version, installOnQuit: false });
    });
    this.updater = u;
    return u;
  }

  private set(d: UpdateDownloadView): void {
    this.state = d;
    for (const l of this.listeners) l(d);
  }
}
