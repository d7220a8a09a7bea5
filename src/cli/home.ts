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

/**
 * An engine address from the command line: a base URL (`http://h:8000`) or a bare `host:port`
 * (`127.0.0.1:18123`, which means http). Throws a message naming the flag otherwise.
 */
export function engineAddress(value: string, what = '--host'): string {
  const v = value.trim();
  if (/^https?:\/\//i.test(v)) {
    try {
      const u = new URL(v);
      if (u.hostname) return v;
    } catch {
      /* fall through to the message */
    }
    throw new Error(`${what} "${value}" is not a valid URL; use http://HOST:PORT or HOST:PORT`);
  }
  const { host, port } = parseHostPort(v, what);
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
