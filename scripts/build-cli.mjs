// Builds the headless agent (`swan-provider`) into one ES module, out/cli/main.mjs, so the command
// starts without the TypeScript loader (less memory and a faster start). Runs on `npm install`
// (prepare). bin/swan-provider.js uses the bundle only while it is newer than every file under src/cli,
// src/core and src/shared, and falls back to tsx otherwise, so a stale bundle never runs edited code.
// Dependencies stay in node_modules (better-sqlite3 is native). esbuild is a dev dependency: without it
// (`npm install --omit=dev`) this says so and leaves the install alone.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

let build;
try {
  ({ build } = await import('esbuild'));
} catch {
  console.warn(
    'esbuild (a dev dependency) is not installed, so out/cli/main.mjs was not built: run "npm install" with dev dependencies to build the swan-provider command.',
  );
}

if (build) {
  try {
    await build({
      entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
      outfile: path.join(root, 'out', 'cli', 'main.mjs'),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    console.log('built out/cli/main.mjs (the swan-provider command)');
  } catch (e) {
    // Never fail an install over this: in a checkout the command still works through tsx.
    console.warn(`could not build out/cli/main.mjs (${e instanceof Error ? e.message : e}); swan-provider will run through tsx`);
  }
}
