// Runs a script in a fresh node process, for tests of process-wide V8 settings (the young-generation cap, the
// old-generation limit) that must not touch the test process itself.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Runs `script` as an ES module in a fresh node process (with tsx, from the repo root, so it can import ./src/…); its stdout, trimmed. */
export function runModuleScript(script: string): string {
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }).trim();
}
