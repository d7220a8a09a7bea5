#!/usr/bin/env node
// Entry of the `swan-provider` command. Runs the prebuilt bundle (out/cli/main.mjs, made by
// scripts/build-cli.mjs on `npm install`) when it is newer than every source file in it, else the
// TypeScript sources through tsx's loader — so `npx swan-provider --help` works right after
// `npm install`, and an edited checkout never runs stale code.
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

async function load() {
  if (process.env.SWAN_NO_BUNDLE !== '1' && bundleIsFresh()) return import(pathToFileURL(bundle).href);
  const { register } = await import('tsx/esm/api');
  register();
  return import('../src/cli/main.ts');
}

const { main } = await load();
await main(process.argv);
