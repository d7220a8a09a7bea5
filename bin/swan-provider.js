#!/usr/bin/env node
// Entry of the `swan-provider` command. Runs the prebuilt bundle (out/cli/main.mjs, made by
// scripts/build-cli.mjs on `npm install`) when it is newer than every source file in it, else the
// TypeScript sources through tsx's loader — so `npx swan-provider --help` works right after
// `npm install`, and an edited checkout never runs stale code. tsx is a dev dependency: an
// installation without it runs the bundle it has, or says how to build one.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bundle = path.join(root, 'out', 'cli', 'main.mjs');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

/** The folders the bundle is built from (the renderer, main and preload are not in it). */
const BUNDLED = ['cli', 'core', 'shared'].map((d) => path.join(root, 'src', d));

function bundleIsFresh() {
  try {
    const built = fs.statSync(bundle).mtimeMs;
    return BUNDLED.every((dir) => !fs.existsSync(dir) || built >= newestMtime(dir));
  } catch {
    return false;
  }
}

/** tsx's loader, in a checkout installed with its dev dependencies; undefined without them. */
async function tsxLoader() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

async function load() {
  if (process.env.SWAN_NO_BUNDLE !== '1' && bundleIsFresh()) return import(pathToFileURL(bundle).href);
  const tsx = await tsxLoader();
  if (tsx) {
    tsx.register();
    return import('../src/cli/main.ts');
  }
  // Installed without dev dependencies (npm install --omit=dev): the built command is all there is.
  if (fs.existsSync(bundle)) {
    process.stderr.write(
      'Note: out/cli/main.mjs is older than the sources, and tsx (a dev dependency) is not installed to run them: running the built command. Run "npm install" with dev dependencies to rebuild it.\n',
    );
    return import(pathToFileURL(bundle).href);
  }
  process.stderr.write(
    'swan-provider is not built in this installation (out/cli/main.mjs is missing), and its build tools (esbuild, tsx: dev dependencies) are not installed, as after "npm install --omit=dev".\n' +
      `Run "npm install" (with dev dependencies) in ${root}, then try again.\n`,
  );
  process.exit(1);
}

const { main } = await load();
await main(process.argv);
