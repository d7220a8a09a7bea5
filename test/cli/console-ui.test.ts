// The console UI is built when missing or older than its sources (an install with --ignore-scripts, an
// edited checkout), with a progress line, before anything listens. Real vite builds of a one-page stand-in
// for the renderer (the real renderer's build is what `npm install` and the e2e specs run).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleUiState, ensureConsoleUi } from '../../src/cli/console-ui';
import { tempHome } from '../support/stack';
import { repoRoot } from '../support/traces';

let root: string;
beforeAll(() => {
  root = tempHome('swan-console-ui-');
  fs.writeFileSync(path.join(root, 'package.json'), '{"name":"console-ui-stand-in","type":"module"}');
  fs.writeFileSync(path.join(root, 'vite.renderer.config.ts'), "export default { root: 'src/renderer', logLevel: 'warn' };\n");
  fs.mkdirSync(path.join(root, 'src', 'renderer'), { recursive: true });
  fs.mkdirSync(path.join(root, 'src', 'shared'));
  fs.writeFileSync(
    path.join(root, 'src', 'renderer', 'index.html'),
    '<!doctype html><title>Swan Provider</title><div id="root"></div><script type="module" src="./main.js"></script>\n',
  );
  fs.writeFileSync(path.join(root, 'src', 'renderer', 'main.js'), "document.getElementById('root').textContent = 'ok';\n");
  fs.writeFileSync(path.join(root, 'src', 'renderer', 'App.tsx'), 'export {};\n');
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('the console UI build', () => {
  it('missing -> built once with a progress line; then fresh; an edited source -> rebuilt; an installed package without sources -> served as is', async () => {
    const out = path.join(root, 'out', 'renderer');
    expect(consoleUiState(root, out)).toBe('missing');
    const lines: string[] = [];
    expect(await ensureConsoleUi((l) => lines.push(l), root, out)).toBeUndefined();
    expect(lines[0]).toBe('Building the console UI (first start, a few seconds)…');
    expect(lines[1]).toMatch(/^Console UI built in \d+\.\d s\.$/);
    expect(fs.readFileSync(path.join(out, 'index.html'), 'utf8')).toContain('<title>Swan Provider</title>');
    expect(consoleUiState(root, out)).toBe('fresh');
    expect(fs.readdirSync(path.dirname(out))).toEqual(['renderer']);

    lines.length = 0;
    expect(await ensureConsoleUi((l) => lines.push(l), root, out)).toBeUndefined();
    expect(lines).toEqual([]);

    // A source edited after the build: the build is made older than App.tsx (moving the source into the
    // future instead would leave a build made within that margin "stale" still).
    const earlier = new Date(fs.statSync(path.join(root, 'src', 'renderer', 'App.tsx')).mtimeMs - 5000);
    fs.utimesSync(path.join(out, 'index.html'), earlier, earlier);
    expect(consoleUiState(root, out)).toBe('stale');
    expect(await ensureConsoleUi((l) => lines.push(l), root, out)).toBeUndefined();
    expect(lines[0]).toContain('older than its sources; rebuilding');
    expect(consoleUiState(root, out)).toBe('fresh');

    const installed = tempHome('swan-console-pkg-');
    fs.cpSync(out, path.join(installed, 'out', 'renderer'), { recursive: true });
    expect(consoleUiState(installed, path.join(installed, 'out', 'renderer'))).toBe('prebuilt');
    fs.rmSync(installed, { recursive: true, force: true });
  }, 120_000);

  it('missing and no vite to build it: the reason, with what to do', async () => {
    const bare = tempHome('swan-console-bare-');
    fs.cpSync(path.join(repoRoot, 'src', 'renderer'), path.join(bare, 'src', 'renderer'), { recursive: true });
    fs.writeFileSync(path.join(bare, 'package.json'), '{"name":"x"}');
    const why = await ensureConsoleUi(() => undefined, bare, path.join(bare, 'out', 'renderer'));
    expect(why).toContain('Run "npm install"');
    fs.rmSync(bare, { recursive: true, force: true });
  });
});
