// The agent's updates on the release channel (decision 0010): check → download (verified against the
// release's SHA256SUMS) → held while any request is in flight → ready once the last one finished. Ready is
// all this part does: it never installs or restarts anything. The desktop app installs a ready file when
// the owner says so (or at quit); the headless agent names the exact command, run by the owner.
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { UpdateCheckView, UpdateDownloadView } from '../../shared/views/settings';
import { BridgeError } from '../../shared/bridge-error';
import type { Logger } from '../base/log';
import type { Resolver } from '../http/address-class';
import { checkRelease } from './check';
import { downloadVerified, UpdateDownloadError, type DownloadedFile } from './download';
import { SIG_ASSET, type TrustedKey } from './signing';
import { installPlan } from './install';
import { assetFor, SUMS_ASSET, type GithubRelease } from './github';

export interface UpdatesOptions {
  /** Where verified files are kept: <home>/updates (0700, files 0600). */
  dir: string;
  mode: 'desktop' | 'headless';
  current: string;
  /** The feed the owner set ('' = the release channel). */
  feed: () => string;
  /** Requests running now (the scheduler's count). */
  inFlight: () => number;
  /** Resolves when no request is running (the scheduler's drained()). */
  drained: () => Promise<void>;
  log: Logger;
  /** Start the download as soon as a check finds a newer release (the desktop app: in the background). */
  autoDownload?: boolean;
  /** A lower size ceiling (tests). */
  maxBytes?: number;
  resolve?: Resolver;
  timeoutMs?: number;
  /** The release keys trusted here (signing.ts): with any, a release's SHA256SUMS must be signed by one. */
  keys?: readonly TrustedKey[];
  /** Where the desktop app would install (install.ts; default this process's platform and environment). */
  installTarget?: { platform: NodeJS.Platform; env: NodeJS.ProcessEnv };
}

export interface UpdatesEvents {
  download: [UpdateDownloadView];
}

/** The command that installs a verified npm tarball (the headless agent), quoted for a POSIX shell. */
export function installCommand(file: string): string {
  return `npm install -g '${file.replace(/'/g, `'\\''`)}'`;
}

export class Updates extends EventEmitter<UpdatesEvents> {
  private last?: UpdateCheckView;
  private release?: GithubRelease;
  private dl?: UpdateDownloadView;
  private running?: Promise<void>;
  private checking?: Promise<UpdateCheckView>;
  private closed = false;
  private readonly abort = new AbortController();

  constructor(private readonly o: UpdatesOptions) {
    super();
  }

  /** The last check with where its download stands, or undefined before any check. */
  status(): UpdateCheckView | undefined {
    if (!this.last) return undefined;
    return { ...this.last, ...(this.dl && this.dl.version === this.last.latest ? { download: { ...this.dl } } : {}) };
  }

  /** Where the download stands. */
  download(): UpdateDownloadView | undefined {
    return this.dl ? { ...this.dl } : undefined;
  }

  /** Asks the channel; one check at a time (a second caller gets the first's answer). */
  check(): Promise<UpdateCheckView> {
    this.checking ??= this.runCheck().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async runCheck(): Promise<UpdateCheckView> {
    const r = await checkRelease({
      current: this.o.current,
      feed: this.o.feed(),
      mode: this.o.mode,
      ...(this.o.resolve ? { resolve: this.o.resolve } : {}),
      ...(this.o.timeoutMs ? { timeoutMs: this.o.timeoutMs } : {}),
    });
    this.last = r.view;
    if (r.view.error) return this.status()!;
    this.release = r.release;
    if (r.view.available && r.release && (!this.dl || this.dl.version !== r.release.version)) {
      this.set({ state: 'available', code: 'update_available', version: r.release.version, installOnQuit: false });
      this.o.log.info(`version ${r.release.version} is available on the release channel (this is ${this.o.current})`, { code: 'update_available' });
      if (this.o.autoDownload) this.startDownload();
    }
    return this.status()!;
  }

  /** Starts the download of the newest release found (or says where it stands); the end arrives as 'download' events. */
  startDownload(): UpdateDownloadView {
    const rel = this.release;
    if (!this.last || !this.last.available || this.last.channel !== 'github' || !rel) {
      if (this.last?.available && this.last.channel !== 'github')
        throw new BridgeError(
          'not_supported',
          'This feed names a version but carries no checksums to verify a download against. Install the new version as you installed this one, or clear the update feed in Settings to use the release channel.',
        );
      throw new BridgeError('not_ready', 'Check for updates first: there is no newer version to download yet.');
    }
    if (this.dl && this.dl.version === rel.version && this.dl.state !== 'available' && this.dl.state !== 'error') return { ...this.dl };
    const asset = assetFor(rel.assets, this.o.mode);
    const sums = rel.assets.find((a) => a.name === SUMS_ASSET);
    const signature = rel.assets.find((a) => a.name === SIG_ASSET);
    if (!asset)
      return this.fail(
        rel.version,
        'update_no_asset',
        `release ${rel.tag} has no file for this system (${this.o.mode === 'headless' ? 'an npm .tgz' : process.platform}). Download it from the release page instead.`,
      );
    if (!sums)
      return this.fail(rel.version, 'update_no_checksums', `release ${rel.tag} has no ${SUMS_ASSET}, so its files cannot be verified; nothing was downloaded`);
    this.set({ state: 'downloading', code: 'update_downloading', version: rel.version, percent: 0, installOnQuit: false });
    this.o.log.info(`downloading ${asset.name} (version ${rel.version}) to check it against ${SUMS_ASSET}`, { code: 'update_downloading' });
    let lastPercent = 0;
    this.running = downloadVerified({
      asset,
      sums,
      ...(signature ? { signature } : {}),
      keys: this.o.keys ?? [],
      version: rel.version,
      dir: this.o.dir,
      current: this.o.current,
      signal: this.abort.signal,
      ...(this.o.maxBytes ? { maxBytes: this.o.maxBytes } : {}),
      ...(this.o.resolve ? { resolve: this.o.resolve } : {}),
      progress: (bytes, total) => {
        const p = Math.min(99, Math.floor((bytes / Math.max(1, total)) * 100));
        if (p >= lastPercent + 5 && this.dl?.state === 'downloading') {
          lastPercent = p;
          this.set({ ...this.dl, percent: p });
        }
      },
    }).then(
      (f) => this.verified(rel.version, f),
      (e: unknown) => {
        // Closed, or a newer release was found meanwhile: this download's end is no longer the news.
        if (this.closed || this.dl?.version !== rel.version) return;
        const err = e instanceof UpdateDownloadError ? e : new UpdateDownloadError('update_download_failed', (e as Error).message);
        this.fail(rel.version, err.code, err.message);
      },
    );
    return { ...this.dl! };
  }

  /**
   * The desktop app: the owner chose to install the verified file now (the host stops the agent and restarts
   * into it) or when the app quits. Never while a request is in flight: "now" waits until the file is ready.
   */
  markInstall(when: 'now' | 'on-quit'): UpdateDownloadView {
    const dl = this.dl;
    if (!dl || (dl.state !== 'ready' && dl.state !== 'held'))
      throw new BridgeError('not_ready', 'Download the new version first; nothing verified is waiting to be installed.');
    const plan = dl.file ? installPlan(dl.file, this.o.installTarget ?? { platform: process.platform, env: process.env }) : undefined;
    if (!plan || plan.kind === 'manual')
      throw new BridgeError(
        'not_supported',
        `This copy of the app cannot install version ${dl.version} itself${plan ? ` (${plan.reason})` : ''}. Quit the app, then install ${dl.file ?? 'the verified file'} as you installed this one.`,
      );
    if (when === 'now' && dl.state === 'held')
      throw new BridgeError(
        'not_ready',
        `Version ${dl.version} waits for the ${dl.inFlight ?? 'running'} request(s) in flight to finish; choose "when I quit", or install once it is ready.`,
      );
    this.set({ ...dl, installOnQuit: true });
    this.o.log.info(`version ${dl.version} will be installed ${when === 'now' ? 'now (the app restarts)' : 'when the app quits'}`, {
      code: 'update_install_chosen',
    });
    return { ...this.dl! };
  }

  /** The verified file the owner chose to install, once it is ready (the desktop host installs it after the agent stopped). */
  chosenInstall(): { version: string; file: string } | undefined {
    const dl = this.dl;
    return dl?.state === 'ready' && dl.installOnQuit && dl.file ? { version: dl.version, file: dl.file } : undefined;
  }

  /** Resolves once the download running now has ended (verified, held or failed). */
  async settled(): Promise<UpdateDownloadView | undefined> {
    await this.running;
    return this.download();
  }

  /** Resolves once the download is ready (or failed): after the hold, when there was one. */
  whenReady(): Promise<UpdateDownloadView> {
    const d = this.dl;
    if (d && (d.state === 'ready' || d.state === 'error')) return Promise.resolve({ ...d });
    return new Promise((resolve) => {
      const on = (v: UpdateDownloadView): void => {
        if (v.state !== 'ready' && v.state !== 'error') return;
        this.off('download', on);
        resolve(v);
      };
      this.on('download', on);
    });
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
  }

  private async verified(version: string, f: DownloadedFile): Promise<void> {
    if (this.closed || this.dl?.version !== version) return;
    const evidence = {
      version,
      file: f.file,
      sha256: f.sha256,
      bytes: f.bytes,
      signature: f.signature,
      ...(f.signedBy ? { signedBy: f.signedBy } : {}),
      installOnQuit: false,
    };
    this.set({ state: 'downloaded', code: 'update_downloaded', ...evidence });
    const signed =
      f.signature === 'verified'
        ? `, signed by release key ${f.signedBy}`
        : '; its signature was not checked (no release key is set here: [Agent] ReleaseSigningKeys)';
    this.o.log.info(`${path.basename(f.file)} matches the release's ${SUMS_ASSET} (sha256 ${f.sha256.slice(0, 16)}…)${signed}`, { code: 'update_downloaded' });
    // Never mid-request: held while any request runs, ready once the last one finished.
    const n = this.o.inFlight();
    if (n > 0) {
      this.set({ state: 'held', code: 'update_held_requests_in_flight', ...evidence, inFlight: n });
      this.o.log.info(`version ${version} waits: ${n} request${n === 1 ? ' is' : 's are'} in flight`, { code: 'update_held_requests_in_flight' });
      await this.o.drained();
      if (this.closed || this.dl?.version !== version) return;
    }
    const command = this.o.mode === 'headless' ? installCommand(f.file) : undefined;
    // The owner may have chosen "install when I quit" while it was held: that choice stands.
    this.set({ state: 'ready', code: 'update_ready', ...evidence, installOnQuit: this.dl?.installOnQuit ?? false, ...(command ? { command } : {}) });
    this.o.log.info(
      this.o.mode === 'headless'
        ? `version ${version} is verified and no request is in flight. To install it: ${command}, then restart the agent (nothing was installed for you)`
        : `version ${version} is verified and no request is in flight: it installs when you restart the app or quit`,
      { code: 'update_ready' },
    );
  }

  private fail(version: string, code: NonNullable<UpdateDownloadView['code']>, why: string): UpdateDownloadView {
    this.set({
      state: 'error',
      code,
      version,
      installOnQuit: false,
      error: `The update was not downloaded: ${why}. Press Download to try again, or update later.`,
    });
    this.o.log.warn(`the update to ${version} failed: ${why}`, { code });
    return { ...this.dl! };
  }

  private set(d: UpdateDownloadView): void {
    this.dl = d;
    this.emit('download', { ...d });
  }
}
