#!/usr/bin/env node
// The newcomer path, as the README tells it, checked by test/integration/cli/newcomer.test.ts (so once per
// `npm test`), or by hand with `node scripts/newcomer-check.mjs`:
//   - this checkout, as `npm install` left it: `npm start` serves the built console with a working ledger
//     (a real SQLite file), and SIGTERM to npm stops everything it started; `swan-provider demo` serves it too;
//   - an installation without dev dependencies: a `git clone` of HEAD into an empty temp folder (nothing
//     beside it), with this checkout's node_modules pruned by `npm prune --omit=dev` and this checkout's
//     out/ (the built command and console, as a release carries them): `npm start` serves that console
//     through the built command (no tsx, no vite); without out/renderer it says the console cannot be built
//     here and what to do; without out/cli `swan-provider` says the same of itself.
// The clone does not download the packages again: it hard-links this checkout's node_modules (a copy
// where hard links are impossible), which is what `npm ci` would unpack from the same lockfile. Each step
// is bounded in time.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const CONSOLE_LINE = /console: (http:\/\/127\.0\.0\.1:\d+\/\?(?:code|token)=[A-Za-z0-9_-]+)/;

function say(line) {
  process.stdout.write(`[newcomer] ${line}\n`);
}

/** Starts a command, resolves with its console URL once printed; rejects on exit or after timeoutMs. */
export function startAndWaitForConsole(cmd, args, { cwd, env = process.env, timeoutMs = 60_000 }) {
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
  let out = '';
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} ${args.join(' ')} printed no console URL within ${timeoutMs / 1000} s:\n${out}`)), timeoutMs);
    const onData = (d) => {
      out += d.toString();
      const m = CONSOLE_LINE.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (out += d.toString()));
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`${cmd} ${args.join(' ')} exited (${code}) before printing a console URL:\n${out}`));
    });
  });
  return { child, url, exited, output: () => out };
}

/** Fetches the console with its token as a browser would (token → cookie → page) and checks it is the app. */
export async function checkConsole(url) {
  const first = await fetch(url, { redirect: 'manual' });
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0];
  if (!cookie) throw new Error(`the console did not accept its own token (HTTP ${first.status})`);
  const base = new URL(url);
  const page = await fetch(new URL('/', base), { headers: { cookie } });
  const html = await page.text();
  if (page.status !== 200) throw new Error(`the console page answered HTTP ${page.status}: ${html.slice(0, 200)}`);
  if (!html.includes('<title>Swan Provider</title>') || !html.includes('id="root"')) throw new Error(`the console page is not the app:\n${html.slice(0, 300)}`);
  const script = /<script[^>]+src="\.?\/?([^"]+\.js)"/.exec(html)?.[1];
  if (!script) throw new Error('the console page loads no script');
  const js = await fetch(new URL(`/${script}`, base), { headers: { cookie } });
  if (js.status !== 200 || !(js.headers.get('content-type') ?? '').includes('javascript'))
    throw new Error(`the console script ${script} answered HTTP ${js.status}`);
  return { script };
}

/** Every process whose command line mentions `marker` (Linux /proc; empty elsewhere). */
export function processesMentioning(marker) {
  if (process.platform !== 'linux') return [];
  const found = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(marker) && Number(pid) !== process.pid) found.push(`${pid} ${cmdline.trim()}`);
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Sends `signal` to the started command (npm itself, not its group), waits for it and checks nothing it started is left. */
export async function stopAndCheck(run, marker, signal = 'SIGTERM', timeoutMs = 15_000) {
  run.child.kill(signal);
  const timer = setTimeout(() => run.child.kill('SIGKILL'), timeoutMs);
  const exit = await run.exited;
  clearTimeout(timer);
  const deadline = Date.now() + timeoutMs;
  let left = processesMentioning(marker);
  while (left.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = processesMentioning(marker);
  }
  if (left.length) {
    for (const p of left) process.kill(Number(p.split(' ')[0]), 'SIGKILL');
    throw new Error(`still running after ${signal} to the command:\n${left.join('\n')}`);
  }
  return exit;
}

/**
 * The agent's usage ledger is a real SQLite file, not records held in memory: an install whose
 * better-sqlite3 build was skipped (npm 12 blocks install scripts that package.json's allowScripts does
 * not name) still starts, but says the SQLite module could not be loaded and keeps usage in memory.
 */
export function checkLedger(home, output) {
  if (/SQLite module of this installation could not be loaded/.test(output)) throw new Error(`the ledger could not load its SQLite module:\n${output}`);
  const file = path.join(home, 'ledger.sqlite');
  const head = fs.existsSync(file) ? fs.readFileSync(file).subarray(0, 16).toString('latin1') : '';
  if (head !== 'SQLite format 3\0') throw new Error(`${file} is not a SQLite database (${head ? 'wrong header' : 'missing'})`);
}

/**
 * A fresh home for `npm start`. The first-run config points at mainnet; the console's overlay names a
 * closed local port instead, so these checks never reach the real Swan Inference hosts (config.toml is
 * still the first-run file).
 */
function offlineHome() {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-newcomer-home-'));
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ hubUrl: 'ws://127.0.0.1:9', serviceUrl: 'http://127.0.0.1:9' }));
  return home;
}

/** `npm start` in `root` with a fresh home: serves the built console; SIGTERM to npm stops everything. */
export async function checkNpmStart(root, { timeoutMs = 60_000 } = {}) {
  const home = offlineHome();
  try {
    const run = startAndWaitForConsole(npm, ['start', '--', '--home', home, '--no-discovery', '--console', '127.0.0.1:0'], { cwd: root, timeoutMs });
    const url = await run.url;
    const { script } = await checkConsole(url);
    say(`npm start served the built console (${script}) at ${url.replace(/(token|code)=.*/, '$1=…')}`);
    checkLedger(home, run.output());
    const config = fs.readFileSync(path.join(home, 'config.toml'), 'utf8');
    if (!config.includes('WebSocketURL = "wss://inference-ws.swanchain.io"')) throw new Error('the first-run config.toml does not point at mainnet');
    const exit = await stopAndCheck(run, home);
    say(`npm start stopped on SIGTERM (exit ${exit.code ?? exit.signal}); nothing left running`);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** `swan-provider demo` in `root`: serves the built console too. */
export async function checkDemo(root, { timeoutMs = 60_000 } = {}) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-newcomer-demo-'));
  try {
    const run = startAndWaitForConsole(process.execPath, [path.join(root, 'bin', 'swan-provider.js'), 'demo', '--home', home, '--console', '127.0.0.1:0'], {
      cwd: root,
      timeoutMs,
    });
    const url = await run.url;
    await checkConsole(url);
    say(`demo served the built console at ${url.replace(/(token|code)=.*/, '$1=…')}`);
    await stopAndCheck(run, home);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** Packages an installation without dev dependencies must not have (the build tools among them). */
const DEV_ONLY = ['electron', 'typescript', 'vitest', '@playwright/test', 'vite', 'tsx', 'esbuild', 'react'];

/** A clone of HEAD in an empty temp folder, with this checkout's node_modules (see the top). */
export function cloneWithModules(source = here) {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-newcomer-'));
  const root = path.join(parent, 'swan-provider-console');
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', source, root], { stdio: 'inherit', timeout: 120_000 });
  say(`cloned HEAD into ${root} (nothing beside it: ${fs.readdirSync(parent).join(', ')})`);
  const from = path.join(source, 'node_modules');
  const to = path.join(root, 'node_modules');
  try {
    execFileSync('cp', ['-al', from, to], { timeout: 300_000 });
  } catch {
    fs.rmSync(to, { recursive: true, force: true });
    fs.cpSync(from, to, { recursive: true, verbatimSymlinks: true });
  }
  // A hard link shares its bytes: a file that npm rewrites in place (its hidden lockfile) must be the
  // clone's own copy, or the rewrite would reach the source checkout; caches are dropped.
  for (const name of fs.readdirSync(to).filter((n) => n.startsWith('.') && n !== '.bin')) {
    const p = path.join(to, name);
    if (name === '.package-lock.json') {
      const bytes = fs.readFileSync(p);
      fs.rmSync(p);
      fs.writeFileSync(p, bytes);
    } else {
      fs.rmSync(p, { recursive: true, force: true });
    }
  }
  return { root, cleanup: () => fs.rmSync(parent, { recursive: true, force: true }) };
}

/**
 * An installation without dev dependencies (see the top): serves the console it was given, through the
 * built command; says what to do when the console or the command is not built.
 */
export async function checkWithoutDevDependencies(source = here) {
  for (const built of [path.join('out', 'cli', 'main.mjs'), path.join('out', 'renderer', 'index.html')]) {
    if (!fs.existsSync(path.join(source, built))) throw new Error(`${built} is missing in ${source}: run "npm install" (or npm run prepare) first`);
  }
  const { root, cleanup } = cloneWithModules(source);
  try {
    if (fs.existsSync(path.join(root, 'out'))) throw new Error('the clone already has out/: it must start unbuilt');
    execFileSync(npm, ['prune', '--omit=dev', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'], { cwd: root, stdio: 'ignore', timeout: 300_000 });
    const left = DEV_ONLY.filter((dev) => fs.existsSync(path.join(root, 'node_modules', dev)));
    if (left.length) throw new Error(`npm prune --omit=dev left ${left.join(', ')} in place: is it a runtime dependency?`);
    for (const part of ['cli', 'renderer']) fs.cpSync(path.join(source, 'out', part), path.join(root, 'out', part), { recursive: true });
    say(`pruned the dev dependencies (${DEV_ONLY.join(', ')} gone) and gave the clone this checkout's out/cli and out/renderer`);
    await checkNpmStart(root);

    fs.rmSync(path.join(root, 'out', 'renderer'), { recursive: true, force: true });
    const home = offlineHome();
    try {
      const run = startAndWaitForConsole(npm, ['start', '--', '--home', home, '--no-discovery', '--console', '127.0.0.1:0'], { cwd: root });
      await run.url;
      if (!/this installation cannot build it/.test(run.output()) || !/Run "npm install" \(with dev dependencies\)/.test(run.output())) {
        throw new Error(`npm start without a built console did not say why and what to do:\n${run.output()}`);
      }
      await stopAndCheck(run, home);
      say('without out/renderer: npm start says the console cannot be built here, and what to do');
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }

    fs.rmSync(path.join(root, 'out', 'cli'), { recursive: true, force: true });
    const bare = spawnSync(process.execPath, [path.join(root, 'bin', 'swan-provider.js'), '--version'], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    if (bare.status !== 1 || !/not built in this installation/.test(bare.stderr) || !/Run "npm install" \(with dev dependencies\)/.test(bare.stderr)) {
      throw new Error(`swan-provider without out/cli exited ${bare.status} without saying what to do:\n${bare.stderr}${bare.stdout}`);
    }
    say('without out/cli: swan-provider says it is not built here, and what to do');
  } finally {
    cleanup();
  }
}

async function main() {
  const started = Date.now();
  await checkNpmStart(here);
  await checkDemo(here);
  await checkWithoutDevDependencies(here);
  say(`passed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`[newcomer] FAILED: ${e instanceof Error ? e.message : e}\n`);
    process.exit(1);
  });
}
