// Electron main: one instance, one window, a tray, the Agent in this process, IPC in between.
// Home folder = app.getPath('userData'), set to the CLI's home (SWAN_HOME overrides it, e.g. per e2e test).
import path from 'node:path';
import { app, BrowserWindow, dialog, nativeTheme } from 'electron';
import { Agent } from '../core/agent';
import { AgentLog, type Logger } from '../core/base/log';
import type { BridgeBackend } from '../shared/bridge/transport';
import type { InvokeChannel, InvokeResults } from '../shared/bridge/channels';
import type { InvokeArgs } from '../shared/bridge/schemas';
import type { SettingsView } from '../shared/views/settings';
import { desktopHome, ensureConfig } from './first-run';
import { installIpc } from './ipc';
import { installDesktopNotifications } from './notifications';
import { installApprovalDialogs } from './approval-dialog';
import { applyStartAtLogin, launchedHidden } from './login-item';
import { appPaths, rendererLocation } from './paths';
import { createDesktopSecretStore } from './secrets-safe-storage';
import { desktopBackend } from './desktop-backend';
import { DesktopUpdater } from './updater';
import { hardenApp } from './security';
import { AppTray } from './tray';
import { createMainWindow, loadRenderer, reveal, windowPreferences } from './window';
import { homePath } from '../core/config/home-layout';
import { lockHome, type HomeLock } from '../core/config/home-lock';
import { installProcessGuard } from '../core/base/process-guard';
import { installPlan, replaceAppImage } from '../core/update/install';
import { spawn } from 'node:child_process';

// One home for the desktop and the headless CLI; Chromium's own files go in a subfolder of it.
const HOME = desktopHome();
app.setPath('userData', HOME);
app.setPath('sessionData', path.join(HOME, 'chromium'));
app.setAppUserModelId('io.swanchain.provider-console');

/** Agent.stop() gets this long at quit before the app exits anyway. */
const STOP_TIMEOUT_MS = 5000;

async function call<C extends InvokeChannel>(backend: BridgeBackend, channel: C, args: InvokeArgs<C>): Promise<InvokeResults[C]> {
  return (await backend.invoke(channel, args)) as InvokeResults[C];
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

class DesktopApp {
  private win?: BrowserWindow;
  private tray?: AppTray;
  private agent?: Agent;
  /** One agent per home: the desktop app and a `swan-provider run` service on one home would share its node and ledger. */
  private homeLock?: HomeLock;
  private disposeIpc?: () => void;
  /** Stops answering the questions of other programs in this home (config/home-questions.ts). */
  private stopQuestions?: () => void;
  private quitting = false;
  private stopped = false;
  private closeToTray = true;
  private startAtLogin?: boolean;
  private toldAboutTray = false;
  private desktopNotifications = true;
  readonly updater: DesktopUpdater;

  constructor(
    private readonly home: string,
    private readonly log: AgentLog,
    private readonly l: Logger,
  ) {
    this.updater = new DesktopUpdater({ current: app.getVersion(), packaged: app.isPackaged, log: l.child('updates') });
  }

  async start(): Promise<void> {
    const renderer = rendererLocation(app.isPackaged);
    hardenApp(renderer, this.l.child('security'));
    const secrets = createDesktopSecretStore(this.home, this.l.child('secrets'));
    this.homeLock = await lockHome(this.home, {
      onCompromised: (err) =>
        this.l.warn(
          `The lock of the home ${this.home} was lost (${err.message}); it is taken back as soon as the disk allows, and until then another agent started on this home would not be refused.`,
          { code: 'home_lock_lost' },
        ),
      onRegained: () => this.l.info(`The lock of the home ${this.home} is held again.`, { code: 'home_lock_regained' }),
      onTakenOver: (h) =>
        this.l.warn(`Another agent (pid ${h.pid}) has the home ${this.home} since this app lost its lock: stop one of them, they share its node and ledger.`, {
          code: 'home_lock_taken',
        }),
    });
    const configPath = ensureConfig(this.home, this.l);
    const agent = await Agent.create({ home: this.home, configPath, log: this.log, secrets, mode: 'desktop' });
    this.agent = agent;

    const settings = await call(agent, 'settings.get', {});
    this.applySettings(settings, true);

    const hidden = launchedHidden();
    const win = createMainWindow({ show: !hidden, dark: nativeTheme.shouldUseDarkColors });
    this.win = win;
    this.disposeIpc = installIpc({
      backend: desktopBackend({ agent, updater: this.updater, restartToInstall: () => void this.restartToInstall() }),
      window: win,
      renderer,
      log: this.l.child('ipc'),
      onInvoked: (channel) => {
        if (channel === 'settings.save') void this.reloadSettings();
      },
    });
    win.on('close', (event) => {
      if (this.quitting || !this.closeToTray || !this.tray) return;
      event.preventDefault();
      win.hide();
      if (!this.toldAboutTray) {
        this.toldAboutTray = true;
        this.l.info('The window is closed; the app keeps serving in the tray. Use the tray menu to quit.');
      }
    });
    win.on('closed', () => {
      this.disposeIpc?.();
      this.disposeIpc = undefined;
      this.win = undefined;
    });

    try {
      this.tray = new AppTray(
        appPaths.resources,
        {
          open: () => this.open(),
          pause: () => void call(agent, 'serving.pause', { reason: 'paused from the tray' }).catch((e: unknown) => this.l.warn(`Pause failed: ${message(e)}`)),
          resume: () => void call(agent, 'serving.resume', {}).catch((e: unknown) => this.l.warn(`Resume failed: ${message(e)}`)),
          quit: () => app.quit(),
        },
        agent.snapshot(),
      );
      agent.on('state', (s) => this.tray?.update(s));
    } catch (err) {
      // Some Linux desktops have no tray; the window is then the only way in, so it never hides.
      this.l.warn(`No tray icon (${message(err)}); closing the window quits the app.`);
      if (hidden) reveal(win);
    }

    installApprovalDialogs(agent.approvals, () => this.win, this.l.child('approvals'));
    installDesktopNotifications({
      alerts: agent.alerts,
      enabled: () => this.desktopNotifications,
      open: () => this.open(),
      log: this.l.child('notifications'),
    });
    if (process.env.SWAN_E2E === '1') this.exposeForTests();
    await loadRenderer(win, renderer).catch((err: unknown) => this.l.error(`The window could not load the console: ${message(err)}`));
    await agent.start();
    // As `swan-provider run` does: `doctor`, `update` and `service` ask the agent of this home (no console link here).
    try {
      this.stopQuestions = agent.answerHomeQuestions();
    } catch (err) {
      this.l.warn(`Other programs cannot ask this app (${message(err)}): \`swan-provider doctor\` will not hear it.`);
    }
  }

  open(): void {
    if (this.win) reveal(this.win);
  }

  /** Quit requested: stop the agent (bounded), then let Electron exit. */
  beforeQuit(): void {
    this.quitting = true;
  }

  async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.disposeIpc?.();
    this.stopQuestions?.();
    this.tray?.destroy();
    if (this.agent) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.l.warn(`The agent did not stop within ${STOP_TIMEOUT_MS / 1000} s; quitting anyway.`);
          resolve();
        }, STOP_TIMEOUT_MS);
      });
      await Promise.race([this.agent.stop().catch((e: unknown) => this.l.warn(`Stopping the agent: ${message(e)}`)), timeout]);
      clearTimeout(timer);
    }
    await this.homeLock?.release();
    await this.log.flush();
  }

  /** The owner pressed Restart: stop the agent, let the new version take the single-instance lock, install. */
  async restartToInstall(): Promise<void> {
    this.quitting = true;
    const verified = this.agent?.chosenUpdate();
    await this.shutdown();
    app.releaseSingleInstanceLock();
    if (verified) this.installVerified(verified.file, true);
    else this.updater.installAndQuit(true);
    app.quit();
  }

  /** After the agent stopped at quit: the version the owner chose to install at quit goes in now. */
  installChosenUpdate(): void {
    const verified = this.agent?.chosenUpdate();
    if (verified) this.installVerified(verified.file, false);
    else if (this.updater.installOnQuit) this.updater.installAndQuit(false);
  }

  /** The release channel's verified file, installed the way this copy of the app was (src/core/update/install.ts). */
  // `restart`: the owner asked to restart into it; whatever happens, an app comes back (the new one, else the old).
  private installVerified(file: string, restart: boolean): void {
    const plan = installPlan(file, { platform: process.platform, env: process.env });
    try {
      if (plan.kind === 'replace_appimage') {
        replaceAppImage(plan.file, plan.target);
        // The AppImage itself, not this process's path: that is inside its mount, gone once this process ends.
        if (restart) app.relaunch({ execPath: plan.target, args: process.argv.slice(1) });
      } else if (plan.kind === 'run_installer') {
        // The installer starts the new version itself when asked to (--force-run); this process only quits.
        const child = spawn(plan.file, restart ? [...plan.args, '--force-run'] : plan.args, { detached: true, stdio: 'ignore' });
        child.on('error', (e) => this.l.error(`update: the installer could not start: ${message(e)}`, { code: 'update_install_failed' }));
        child.unref();
      } else {
        this.l.warn(`update: ${plan.reason}; install ${plan.file} yourself (it is verified)`, { code: 'update_install_manual' });
        if (restart) app.relaunch();
        return;
      }
      this.l.info(`update: ${path.basename(file)} installed (${plan.kind})`, { code: 'update_installed' });
    } catch (e) {
      this.l.error(`update: ${path.basename(file)} could not be installed: ${message(e)}; the app is unchanged`, { code: 'update_install_failed' });
      if (restart) app.relaunch();
    }
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private async reloadSettings(): Promise<void> {
    if (!this.agent) return;
    try {
      this.applySettings(await call(this.agent, 'settings.get', {}), false);
    } catch (err) {
      this.l.warn(`Could not re-read settings: ${message(err)}`);
    }
  }

  private applySettings(s: SettingsView, first: boolean): void {
    this.closeToTray = s.closeToTray;
    this.desktopNotifications = s.desktopNotifications;
    nativeTheme.themeSource = s.theme;
    // Registered only when the owner changes it (or it is on): a fresh profile never touches the OS.
    if ((first && s.startAtLogin) || (!first && s.startAtLogin !== this.startAtLogin)) applyStartAtLogin(s.startAtLogin, this.l.child('login'));
    this.startAtLogin = s.startAtLogin;
  }

  /** e2e only (SWAN_E2E=1): read what the tray shows and click its items, as an owner would. */
  private exposeForTests(): void {
    const hook = {
      tray: () => this.tray?.view,
      clickTray: (id: string) => {
        const item = this.tray?.menu?.getMenuItemById(id);
        if (!item) throw new Error(`no tray menu item "${id}"`);
        item.click();
      },
      webPreferences: windowPreferences,
      closeToTray: () => this.closeToTray,
      home: this.home,
    };
    (globalThis as unknown as { __swanDesktop: typeof hook }).__swanDesktop = hook;
  }
}

function boot(): void {
  if (!app.requestSingleInstanceLock()) {
    // Another copy runs with this home folder: it shows its window (second-instance) and we leave.
    app.quit();
    return;
  }
  const home = app.getPath('userData');
  const log = new AgentLog({ file: homePath(home, 'log'), console: 'info' });
  const l = log.child('desktop');
  // A failure no boundary caught is logged and the app keeps serving (src/core/base/process-guard.ts).
  installProcessGuard(log.child('process'));
  const desktop = new DesktopApp(home, log, l);

  app.on('second-instance', () => desktop.open());
  app.on('activate', () => desktop.open());
  app.on('before-quit', () => desktop.beforeQuit());
  app.on('window-all-closed', () => app.quit());
  app.on('will-quit', (event) => {
    if (desktop.isStopped) return;
    event.preventDefault();
    void desktop
      .shutdown()
      .then(() => desktop.installChosenUpdate())
      .catch((e: unknown) => l.warn(`Quitting: ${message(e)}`))
      .finally(() => app.quit());
  });

  app
    .whenReady()
    .then(() => desktop.start())
    .catch((err: unknown) => {
      const text = message(err);
      l.error(`The app could not start: ${text}`);
      dialog.showErrorBox(
        'Swan Provider Console could not start',
        `${text}\n\nCheck ${homePath(home, 'config')} and the log in ${homePath(home, 'logs')}, then start the app again.`,
      );
      app.exit(1);
    });
}

boot();
