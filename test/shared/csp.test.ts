// One Content-Security-Policy for the UI (src/shared/csp.ts): the desktop header, the console header and
// the built index.html's <meta> tag all come from it; connect-src is 'self' (plus the console's own
// WebSocket origin, or the dev server's HMR socket) and never a scheme-wide ws:/wss:. Source maps are
// not served by the console.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentSecurityPolicy as consolePolicy, resolveStatic } from '../../src/core/console/static-files';
import { contentSecurityPolicy as desktopPolicy } from '../../src/main/nav-policy';
import { contentSecurityPolicy, CSP_PLACEHOLDER, withCspMeta } from '../../src/shared/csp';
import { repoRoot } from '../support/traces';

const directive = (csp: string, name: string) => csp.split('; ').find((d) => d.startsWith(`${name} `));
const indexHtml = fs.readFileSync(path.join(repoRoot, 'src', 'renderer', 'index.html'), 'utf8');

describe('one CSP source', () => {
  it("index.html holds only the placeholder; the build fills in the shared policy with connect-src 'self'", () => {
    expect(indexHtml).toContain(`content="${CSP_PLACEHOLDER}"`);
    expect(indexHtml).not.toMatch(/default-src/);
    const built = withCspMeta(indexHtml, 'build');
    const meta = /http-equiv="Content-Security-Policy"\s+content="([^"]+)"/.exec(built)?.[1] ?? '';
    expect(meta).toBe(contentSecurityPolicy({ meta: true }));
    expect(directive(meta, 'connect-src')).toBe("connect-src 'self'");
    expect(meta).not.toContain('frame-ancestors'); // ignored in <meta>
    expect(withCspMeta(indexHtml, 'serve')).not.toContain('Content-Security-Policy');
  });

  it('the desktop and console headers are the same policy; only connect-src differs, by exact origins', () => {
    const desktop = desktopPolicy({ kind: 'file', indexFile: '/app/out/renderer/index.html' });
    const console = consolePolicy('127.0.0.1:7777');
    expect(desktop).toBe(contentSecurityPolicy());
    const withoutConnect = (p: string) =>
      p
        .split('; ')
        .filter((d) => !d.startsWith('connect-src '))
        .join('; ');
    expect(withoutConnect(console)).toBe(withoutConnect(desktop));
    expect(directive(console, 'connect-src')).toBe("connect-src 'self' ws://127.0.0.1:7777 wss://127.0.0.1:7777");
    for (const p of [desktop, console, contentSecurityPolicy({ meta: true }), desktopPolicy({ kind: 'dev', url: 'http://localhost:5173/' })]) {
      expect(directive(p, 'connect-src')).not.toMatch(/(^|\s)wss?:(\s|$)/);
      expect(p).not.toContain('unsafe-eval');
    }
  });

  it('the console does not serve source maps', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-maps-'));
    try {
      fs.mkdirSync(path.join(dir, 'assets'));
      fs.writeFileSync(path.join(dir, 'assets', 'index.js'), '1');
      fs.writeFileSync(path.join(dir, 'assets', 'index.js.map'), '{}');
      expect(resolveStatic(dir, '/assets/index.js')).not.toBeNull();
      expect(resolveStatic(dir, '/assets/index.js.map')).toBeNull();
      expect(resolveStatic(dir, '/assets/index.js.MAP')).toBeNull();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
