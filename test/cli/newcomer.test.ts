// The README's two commands in this checkout: `npm start` serves the built console (fetched with its
// token, checked to be the app) and SIGTERM to npm stops everything it started (it used to leave the
// agent running as an orphan); `swan-provider demo` serves it too. The same checks run from a clean
// clone in .ci/run (`node scripts/newcomer-check.mjs --clone`).
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { checkDemo, checkNpmStart, processesMentioning } from '../../scripts/newcomer-check.mjs';
import { repoRoot } from '../support/traces';

const linux = process.platform === 'linux';

describe('newcomer path', () => {
  // The orphan check reads /proc; elsewhere npm start is still checked to serve the console.
  it('npm start serves the built console; SIGTERM to npm leaves nothing running', async () => {
    await expect((checkNpmStart as (root: string) => Promise<void>)(repoRoot)).resolves.toBeUndefined();
    if (linux) expect((processesMentioning as (m: string) => string[])('swan-newcomer-home-')).toEqual([]);
  }, 120_000);

  it('swan-provider demo serves the built console', async () => {
    await expect((checkDemo as (root: string) => Promise<void>)(repoRoot)).resolves.toBeUndefined();
  }, 120_000);
});
