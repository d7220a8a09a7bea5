// Builds the browser console (out/renderer) on `npm install` (prepare), so `npm start`, `demo` and
// `run --console` serve it with no extra step. vite and React are dev dependencies: without them
// (`npm install --omit=dev`) this says so, and an installation that carries a built console serves it.
// A failure never fails the install: the first `run --console` (or `npm start`, `demo`) builds it
// again and says why it could not.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let vite;
try {
  const pkg = createRequire(path.join(root, 'package.json')).resolve('vite/package.json');
  vite = path.join(path.dirname(pkg), JSON.parse(fs.readFileSync(pkg, 'utf8')).bin?.vite ?? 'bin/vite.js');
} catch {
  console.warn('vite (a dev dependency) is not installed, so the console UI was not built: run "npm install" with dev dependencies to build it.');
  process.exit(0);
}
const r = spawnSync(process.execPath, [vite, 'build', '--config', path.join(root, 'vite.renderer.config.ts'), '--logLevel', 'warn'], {
  cwd: root,
  stdio: 'inherit',
});
if (r.status === 0) console.log('built out/renderer (the browser console)');
else console.warn(`could not build out/renderer (vite exited with ${r.status}); the first start will try again`);
