// bin/swan-provider.js (bin/load-agent.js) keeps V8's young generation at its first size while the agent's code loads: loading
// it (the bundle, zod, systeminformation, pino…) doubles new space from 2 to 16 MB otherwise, before the
// agent's own cap (src/core/young-generation.ts) can act, and those pages stay resident (docs/benchmarks.md,
// issue 18, sixth pass). The control loads the same code without the entry and sees it grow.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, cleanEnv } from '../../support/cli/cli';
import { repoRoot } from '../../support/traces';

const MB = 1024 * 1024;
const BUNDLE = path.join(repoRoot, 'out', 'cli', 'main.mjs');

/** A preloaded module that prints new space's size as the process exits. */
const PROBE = `data:text/javascript,${encodeURIComponent(
  "import v8 from 'node:v8'; process.on('exit', () => process.stderr.write('new_space ' + v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size + '\\n'));",
)}`;

/** new_space's size in bytes as `node --import PROBE ...args` exits. */
function measure(args: string[], env: NodeJS.ProcessEnv = {}): number {
  const r = spawnSync(process.execPath, ['--import', PROBE, ...args], { cwd: repoRoot, env: cleanEnv(env), encoding: 'utf8', timeout: 60_000 });
  const m = /new_space (\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`node ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return Number(m[1]);
}

describe('the swan-provider entry and the young generation', () => {
  it('loads the bundle with new space at its first size', () => {
    expect(measure([BIN, '--version'])).toBeLessThan(8 * MB);
  });

  it('does the same on the TypeScript fallback, whose loader thread resets the flag', () => {
    expect(measure([BIN, '--version'], { SWAN_NO_BUNDLE: '1' })).toBeLessThan(8 * MB);
  });

  it('control: the same code imported without the entry grows new space', () => {
    // npm install builds out/cli/main.mjs; a checkout that has not run it gets it built here.
    if (!fs.existsSync(BUNDLE)) execFileSync(process.execPath, [path.join(repoRoot, 'scripts', 'build-cli.mjs')], { cwd: repoRoot, stdio: 'ignore', timeout: 60_000 });
    expect(measure(['--input-type=module', '-e', `await import(${JSON.stringify(BUNDLE)})`])).toBeGreaterThanOrEqual(8 * MB);
  });
});
