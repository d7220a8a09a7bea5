// `npm run screenshots`: rebuilds the console and runs the e2e specs that take the docs' screenshots,
// with SWAN_SCREENSHOTS=1 so they are copied into docs/screenshots. `npm test` (and e2e in general)
// never writes tracked files: without the variable, screenshots stay in e2e/artifacts (ignored by git).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const env = { ...process.env, SWAN_SCREENSHOTS: '1' };
const step = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
step(process.execPath, [path.join(root, 'scripts', 'build-console.mjs')]);
step(npx, ['playwright', 'test', '--project', 'console', '--grep', '@screenshots', ...process.argv.slice(2)]);
