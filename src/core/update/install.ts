// Installing a verified release file in the desktop app, after the agent has stopped (at quit, or a restart the
// owner asked for): never while a request runs, since the agent is stopped first and the file was held until
// none was in flight. What can be done depends on how the app was installed:
//   - a Linux AppImage (the running one is $APPIMAGE): the verified .AppImage replaces it, atomically (a copy
//     beside it, made executable and synced, then renamed over it; the running app keeps the old file open);
//   - Windows: the verified NSIS installer runs silently (/S) once the app has quit;
//   - anything else (a .dmg, a package manager's install): said plainly, with the file, for the owner to install.
import fs from 'node:fs';
import path from 'node:path';

export type InstallPlan =
  | { kind: 'replace_appimage'; file: string; target: string }
  | { kind: 'run_installer'; file: string; args: string[] }
  | { kind: 'manual'; file: string; reason: string };

export function installPlan(file: string, o: { platform: NodeJS.Platform; env: NodeJS.ProcessEnv }): InstallPlan {
  const name = path.basename(file);
  if (o.platform === 'linux' && /\.AppImage$/i.test(name)) {
    const target = o.env.APPIMAGE;
    if (target && path.isAbsolute(target)) return { kind: 'replace_appimage', file, target };
    return { kind: 'manual', file, reason: 'this app is not running from an AppImage, so the AppImage cannot replace it' };
  }
  if (o.platform === 'win32' && /\.exe$/i.test(name)) return { kind: 'run_installer', file, args: ['/S'] };
  if (o.platform === 'darwin') return { kind: 'manual', file, reason: 'on macOS the new version is installed from its disk image' };
  return { kind: 'manual', file, reason: `this app cannot install ${name} itself` };
}

/** The AppImage step: `file` (verified) replaces `target` in one rename; on any failure the old one stays. */
export function replaceAppImage(file: string, target: string): void {
  const next = `${target}.new`;
  try {
    fs.copyFileSync(file, next);
    fs.chmodSync(next, 0o755);
    const fd = fs.openSync(next, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(next, target);
  } catch (e) {
    fs.rmSync(next, { force: true });
    throw e;
  }
}
