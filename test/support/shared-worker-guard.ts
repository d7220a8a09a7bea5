// The unit files share their worker processes (vitest.config.ts: the `unit` project, `isolate: false`): a file that leaves the
// process changed would change the files after it, and only on the days they happen to share a worker. This
// guard, run around every file, fails the file that leaves the environment or the timers changed, so such a
// leak is a red test in its own file rather than a flake in another.
import { afterAll, beforeAll, expect, vi } from 'vitest';

let envBefore: Record<string, string | undefined> = {};

beforeAll(() => {
  envBefore = { ...process.env };
});

afterAll(() => {
  const changed = new Set([...Object.keys(envBefore), ...Object.keys(process.env)].filter((k) => envBefore[k] !== process.env[k]));
  expect([...changed], 'environment variables this file set and did not restore (pass them to the child instead)').toEqual([]);
  expect(vi.isFakeTimers(), 'fake timers this file left on (restore them in afterEach)').toBe(false);
});
