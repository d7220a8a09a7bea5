#!/usr/bin/env node
// Entry of the `swan-provider` command. Runs the prebuilt bundle (out/cli/main.mjs, made by
// scripts/build-cli.mjs on `npm install`) when it is newer than every source file in it, else the
// TypeScript sources through tsx's loader — so `npx swan-provider --help` works right after
// `npm install`, and an edited checkout never runs stale code.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
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

/**
 * Loading the agent's code (the bundle, zod, systeminformation, pino…) is one burst of allocation that makes
 * V8 double its young generation from 2 to 16 MB before the agent can cap it (src/core/young-generation.ts),
 * and those pages then stay resident while the agent idles. So the young generation keeps its first size
 * while the code loads (V8 reads this flag each time it would grow it) and may grow again before it runs.
 */
function growYoungGeneration(on) {
  v8.setFlagsFromString(`--semi-space-growth-factor=${on ? 2 : 1}`);
}

let main;
growYoungGeneration(false);
try {
  if (process.env.SWAN_NO_BUNDLE !== '1' && bundleIsFresh()) {
    ({ main } = await import(pathToFileURL(bundle).href));
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    growYoungGeneration(false); // V8 resets the flag when it sets up the loader thread's heap
    ({ main } = await import('../src/cli/main.ts'));
  }
} finally {
  growYoungGeneration(true);
}
await main(process.argv);
