// The README's two commands in this checkout: `npm start` serves the built console (fetched with its
// token, checked to be the app) and SIGTERM to npm stops everything it started (it used to leave the
// agent running as an orphan); `swan-provider demo` serves it too. The same checks run from a clean
// clone in .ci/run (`node scripts/newcomer-check.mjs --clone`).
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { checkDemo, checkNpmStart } from '../../../scripts/newcomer-check.mjs';
import { repoRoot } from '../../support/traces';

describe('newcomer path', () => {
  // checkNpmStart fails when anything started with its fresh home is still running after SIGTERM to npm
  // (read from /proc on Linux; elsewhere npm start is still checked to serve the console).
  it('npm start serves the built console; SIGTERM to npm leaves nothing running', async () => {
    await expect((checkNpmStart as (root: string) => Promise<void>)(repoRoot)).resolves.toBeUndefined();
  }, 120_000);

  it('swan-provider demo serves the built console', async () => {
    await expect((checkDemo as (root: string) => Promise<void>)(repoRoot)).resolves.toBeUndefined();
  }, 120_000);
});
