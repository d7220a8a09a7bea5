// Builds the headless agent (`swan-provider`) into one ES module, out/cli/main.mjs, so the command
// starts without the TypeScript loader (about 30 MB less memory and a faster start; see
// docs/benchmarks.md). Runs on `npm install` (prepare). bin/swan-provider.js uses the bundle only
// while it is newer than every file under src/, and falls back to tsx otherwise, so a stale bundle
// can never run edited code. Dependencies stay in node_modules (better-sqlite3 is native).
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

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
  // Never fail an install over this: the command still works through tsx.
  console.warn(`could not build out/cli/main.mjs (${e instanceof Error ? e.message : e}); swan-provider will run through tsx`);
}
