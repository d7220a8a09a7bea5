// Paths the CLI needs: the home folder (see src/core/config/home.ts), the package root, the built console.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultHome } from '../core/config/home';

export { defaultHome };

/** The repository (or installed package) root: bin/, out/renderer and resources/ live below it. */
export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The built renderer the browser console serves. */
export const rendererDir = path.join(packageRoot, 'out', 'renderer');

export function parseHostPort(value: string, what: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^\s:]+):(\d{1,5})$/.exec(value.trim());
  if (!m || Number(m[2]) > 65535) throw new Error(`${what} "${value}" must look like 127.0.0.1:7777`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}
