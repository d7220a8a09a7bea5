// The built console (out/renderer) that `run --console`, `demo` and the headless `npm start` serve.
// `npm install` builds it (prepare); when it is missing or older than its sources (an edited or
// updated checkout, an install with --ignore-scripts), it is built here once, with a progress line,
// before anything listens. The build tools (vite, React…) are dev dependencies: an installation without
// them (`npm install --omit=dev`) serves the console it was given, and says what to do when it has none.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageRoot, rendererDir } from './home';

/** What the renderer bundle is built from. */
export const RENDERER_SOURCES = [path.join('src', 'renderer'), path.join('src', 'shared'), 'vite.renderer.config.ts'];

function newestMtime(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

export type ConsoleUiState = 'fresh' | 'missing' | 'stale' | 'prebuilt';

/** 'prebuilt': built, and no sources here to compare with (an installed package without src/renderer). */
export function consoleUiState(root = packageRoot, out = rendererDir): ConsoleUiState {
  const index = path.join(out, 'index.html');
  const sources = RENDERER_SOURCES.map((s) => path.join(root, s)).filter((s) => fs.existsSync(s));
  if (!fs.existsSync(index)) return 'missing';
  if (!fs.existsSync(path.join(root, 'src', 'renderer'))) return 'prebuilt';
  const built = fs.statSync(index).mtimeMs;
  return sources.every((s) => newestMtime(s) <= built) ? 'fresh' : 'stale';
}

function viteBin(root: string): string | undefined {
  try {
    const pkgFile = createRequire(path.join(root, 'package.json')).resolve('vite/package.json');
    const bin = (JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { bin?: { vite?: string } }).bin?.vite ?? 'bin/vite.js';
    return path.join(path.dirname(pkgFile), bin);
  } catch {
    return undefined;
  }
}

/**
 * Builds out/renderer when it is missing or stale. Resolves with undefined when the console can be
 * served, or the reason it cannot (said once, with what to do). The build goes to a temporary folder
 * that replaces out/renderer at the end, so a console already serving (or a build beside this one)
 * never sees half a bundle.
 */
export async function ensureConsoleUi(say: (line: string) => void, root = packageRoot, out = rendererDir): Promise<string | undefined> {
  const state = consoleUiState(root, out);
  if (state === 'fresh' || state === 'prebuilt') return undefined;
  const vite = viteBin(root);
  if (!vite || !fs.existsSync(path.join(root, 'vite.renderer.config.ts'))) {
    return state === 'stale'
      ? undefined
      : `The console UI is not built, and this installation cannot build it: its build tools (vite, a dev dependency) are not installed, as after "npm install --omit=dev". Run "npm install" (with dev dependencies) in ${root}, then start again.`;
  }
  say(
    state === 'missing' ? 'Building the console UI (first start, a few seconds)…' : 'The console UI is older than its sources; rebuilding it (a few seconds)…',
  );
  const tmp = `${out}.build-${process.pid}`;
  const started = Date.now();
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [vite, 'build', '--config', path.join(root, 'vite.renderer.config.ts'), '--outDir', tmp, '--emptyOutDir', '--logLevel', 'warn'],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (e) => resolve({ code: -1, output: e.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
  if (result.code !== 0 || !fs.existsSync(path.join(tmp, 'index.html'))) {
    fs.rmSync(tmp, { recursive: true, force: true });
    const tail = result.output.trim().split('\n').slice(-5).join('\n');
    if (state === 'stale') {
      say(`The console UI could not be rebuilt (vite exited with ${result.code}); serving the older build. Run "npm run build:renderer" to see why.`);
      return undefined;
    }
    return `The console UI could not be built (vite exited with ${result.code}):\n${tail}\nFix the error above, or run "npm run build:renderer" to see it in full.`;
  }
  const old = `${out}.old-${process.pid}`;
  try {
    if (fs.existsSync(out)) fs.renameSync(out, old);
    fs.renameSync(tmp, out);
  } catch {
    // Another start built it at the same moment: theirs is as good as ours.
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.rmSync(old, { recursive: true, force: true });
  say(`Console UI built in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return undefined;
}
