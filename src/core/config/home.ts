// Where the agent keeps its files when no --home is given: SWAN_HOME, else the OS's app-data folder.
// Shared by the CLI and the desktop app, so `swan-provider usage` and `doctor` see the desktop's data.
import os from 'node:os';
import path from 'node:path';

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWAN_HOME) return env.SWAN_HOME;
  if (process.platform === 'win32') return path.join(env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'Swan Provider Console');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Swan Provider Console');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'swan-provider');
}
