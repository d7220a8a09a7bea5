// Where the agent keeps its files when no --home is given: SWAN_HOME, else the OS's app-data folder.
// Shared by the CLI and the desktop app, so `swan-provider usage` and `doctor` see the desktop's data.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HOME_FILES } from './home-layout';

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWAN_HOME) return env.SWAN_HOME;
  if (process.platform === 'win32') return path.join(env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'Swan Provider Console');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Swan Provider Console');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'swan-provider');
}

/** Files in the home folder hold keys, usage and settings (URLs may carry user:pass@): owner only. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;
/** Sub-folders of the home whose files are ours (Chromium's own folder in the desktop home is left alone). */
const OWN_DIRS = ['', HOME_FILES.logs, HOME_FILES.cache, HOME_FILES.weights];

/**
 * The one place that makes the home folder: created 0700 if missing, and — on every start — the
 * folder, logs/ and every file directly in them are tightened to 0700 / 0600 when an older version or
 * another tool left them readable by others. Returns the files it fixed. No-op on Windows (ACLs).
 */
export function ensureHome(home: string): string[] {
  fs.mkdirSync(home, { recursive: true, mode: DIR_MODE });
  if (process.platform === 'win32') return [];
  const fixed: string[] = [];
  const tighten = (p: string, want: number) => {
    const st = fs.lstatSync(p);
    if (st.isSymbolicLink() || (st.mode & 0o777 & ~want) === 0) return;
    fs.chmodSync(p, want);
    fixed.push(p);
  };
  for (const sub of OWN_DIRS) {
    const dir = path.join(home, sub);
    if (!fs.existsSync(dir)) continue;
    tighten(dir, DIR_MODE);
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isFile()) tighten(path.join(dir, e.name), FILE_MODE);
  }
  return fixed;
}
