// Start at login: off until the owner turns it on in Settings. macOS and Windows use the OS login items;
// Linux gets an XDG autostart entry. Only the installed app registers itself (never a dev or test run).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { app } from 'electron';
import type { Logger } from '../core/base/log';

/** Passed by the login item so the app starts in the tray without a window. */
export const HIDDEN_FLAG = '--hidden';

export function launchedHidden(argv: string[] = process.argv): boolean {
  if (argv.includes(HIDDEN_FLAG)) return true;
  return process.platform === 'darwin' && app.getLoginItemSettings().wasOpenedAtLogin;
}

function autostartFile(): string {
  const config = process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(config, 'autostart', 'swan-provider-console.desktop');
}

/** Quotes one argument for a desktop entry's Exec line. */
function execArg(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `"${arg.replace(/(["`$\\])/g, '\\$1')}"`;
}

export function applyStartAtLogin(enabled: boolean, log: Logger): void {
  if (!app.isPackaged) {
    log.info(`Start at login ${enabled ? 'on' : 'off'}: applies to the installed app only; not registering a development build.`);
    return;
  }
  try {
    if (process.platform === 'linux') {
      const file = autostartFile();
      if (enabled) {
        // An AppImage is started through its own file, not the temporary mount the process runs from.
        const exe = process.env.APPIMAGE || process.execPath;
        const entry = [
          '[Desktop Entry]',
          'Type=Application',
          'Name=Swan Provider Console',
          'Comment=Serve your GPU on the Swan Inference network',
          `Exec=${[exe, HIDDEN_FLAG].map(execArg).join(' ')}`,
          'X-GNOME-Autostart-enabled=true',
          'Terminal=false',
          '',
        ].join('\n');
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, entry);
      } else {
        fs.rmSync(file, { force: true });
      }
    } else {
      app.setLoginItemSettings({ openAtLogin: enabled, args: [HIDDEN_FLAG] });
    }
    log.info(enabled ? 'The app will start at login, in the tray.' : 'The app will no longer start at login.');
  } catch (err) {
    log.warn(`Could not change start at login: ${err instanceof Error ? err.message : String(err)}. Add the app to your startup programs by hand.`);
  }
}
