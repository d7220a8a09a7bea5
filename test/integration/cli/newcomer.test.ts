// The README's newcomer path (scripts/newcomer-check.mjs): in this checkout `npm start` serves the built
// console with a working ledger, and SIGTERM to npm stops everything it started (it used to leave the agent
// running as an orphan); `swan-provider demo` serves it too; and an installation without dev dependencies
// (a clone with nothing beside it, `npm prune --omit=dev`) serves the console it was given through the built
// command, or says what to do when it has none.
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { checkDemo, checkNpmStart, checkWithoutDevDependencies } from '../../../scripts/newcomer-check.mjs';
import { repoRoot } from '../../support/traces';

type Check = (root: string) => Promise<void>;

describe('newcomer path', () => {
  // checkNpmStart fails when anything started with its fresh home is still running after SIGTERM to npm
  // (read from /proc on Linux; elsewhere npm start is still checked to serve the console).
  it('npm start serves the built console with a SQLite ledger; SIGTERM to npm leaves nothing running', async () => {
    await expect((checkNpmStart as Check)(repoRoot)).resolves.toBeUndefined();
  }, 120_000);

  it('swan-provider demo serves the built console', async () => {
    await expect((checkDemo as Check)(repoRoot)).resolves.toBeUndefined();
  }, 120_000);

  it('without dev dependencies: the given console through the built command; a clear message without them', async () => {
    await expect((checkWithoutDevDependencies as Check)(repoRoot)).resolves.toBeUndefined();
  }, 300_000);
});
