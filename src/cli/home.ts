// Where the agent keeps its files when --home is not given: the OS's app-data folder.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function defaultHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SWAN_HOME) return env.SWAN_HOME;
  if (process.platform === 'win32') return path.join(env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'), 'Swan Provider Console');
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Swan Provider Console');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'), 'swan-provider');
}

/** The repository (or installed package) root: bin/, out/renderer and resources/ live below it. */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built renderer the browser console serves. */
export const rendererDir = path.join(packageRoot, 'out', 'renderer');

export function parseHostPort(value: string, what: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^\s:]+):(\d{1,5})$/.exec(value.trim());
  if (!m || Number(m[2]) > 65535) throw new Error(`${what} "${value}" must look like 127.0.0.1:7777`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
