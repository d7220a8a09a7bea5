#!/usr/bin/env node
// `npm start`: the desktop app where Electron can run; otherwise the headless agent with the browser
// console, so `npm start` always gives the owner a working console.
// Extra arguments go to whichever starts: `npm start -- --home /tmp/swan`.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const rest = process.argv.slice(2);

/**
 * The Electron executable, or why there is none. Reads the electron package's path.txt instead of
 * `require('electron')`, which would try to download the binary when it is missing.
 */
function findElectron() {
  let pkgDir;
  try {
    pkgDir = path.dirname(require.resolve('electron/package.json'));
  } catch {
    return { why: 'no Electron binary: the electron package is not installed' };
  }
  const override = process.env.ELECTRON_OVERRIDE_DIST_PATH;
  const pathFile = path.join(pkgDir, 'path.txt');
  const name = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : '';
  const exe = override ? path.join(override, name || 'electron') : name ? path.join(pkgDir, 'dist', name) : '';
  if (!exe || !fs.existsSync(exe)) return { why: 'no Electron binary' };
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return { why: 'no display' };
  return { exe };
}

/**
 * Runs a command to the end, with our stdio; resolves with its exit code. SIGINT, SIGTERM and SIGHUP
 * are passed on to it. `npm start` runs us under `sh -c`, and a SIGTERM to npm stops that shell without
 * telling us: when our parent goes away we stop the child the same way, so nothing is left running.
 */
function run(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    process.on('SIGHUP', forward);
    const parent = process.ppid;
    const orphanWatch = setInterval(() => {
      if (process.ppid !== parent) {
        clearInterval(orphanWatch);
        child.kill('SIGTERM');
      }
    }, 250);
    child.on('error', (err) => {
      clearInterval(orphanWatch);
      console.error(`Could not start ${cmd}: ${err.message}`);
      resolve(1);
    });
    child.on('exit', (code, signal) => {
      clearInterval(orphanWatch);
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      process.off('SIGHUP', forward);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const electron = findElectron();
if (electron.exe) {
  const built = await run(process.execPath, [path.join(root, 'node_modules', 'electron-vite', 'bin', 'electron-vite.js'), 'build']);
  if (built !== 0) {
    console.error('The desktop build failed (see above); fix it, or run the headless agent: node bin/swan-provider.js run --console 127.0.0.1:7777');
    process.exit(built);
  }
  // ELECTRON_RUN_AS_NODE from a parent shell would start Electron as plain Node.
  const env = { ...process.env };
  delete env.ELECTRON_RUN_AS_NODE;
  process.exit(await run(electron.exe, [root, ...rest], { env }));
} else {
  console.log(`Electron cannot start here (${electron.why}); starting the agent headless with the browser console instead.`);
  const hasConsole = rest.some((a) => a === '--console' || a.startsWith('--console='));
  const args = [path.join(root, 'bin', 'swan-provider.js'), 'run', '--init-if-missing', ...(hasConsole ? [] : ['--console', '127.0.0.1:7777']), ...rest];
  process.exit(await run(process.execPath, args));
}
