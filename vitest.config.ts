import { defineConfig } from 'vitest/config';

// SWAN_DISCOVERY_URLS empty: auto-discovery probes no default port, in the suites and every agent or CLI they
// start, so an engine this machine happens to run (a llama-server on 8080) is never taken for a test's own.
const shared = { environment: 'node', testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks', env: { SWAN_DISCOVERY_URLS: '' } } as const;

/** Folders of tests that drive the product's parts in the test's own process (a few start a stand-in tool or helper). */
const UNIT = ['core', 'cli', 'renderer', 'shared', 'main', 'docs', 'bench'];

export default defineConfig({
  test: {
    // Most suites wait on sockets, child processes and engines rather than compute: on a 2-core machine
    // vitest's default (cores - 1 = one file at a time) leaves the CPU idle through those waits. Three
    // files at once took a CLI and conformance subset from 122 s to 49 s on the same loaded machine.
    maxWorkers: 3,
    projects: [
      // The unit files share their worker process (no fresh process and module graph per file): importing the
      // product again for each of 150 short files was most of their CPU on a 2-core machine (117 files: 52 s
      // isolated, 11 s shared). The guard fails a file that leaves the process changed for the next one. The
      // suites that run agents, engines, bundles and the CLI end to end keep a process each.
      {
        test: {
          ...shared,
          name: 'unit',
          include: UNIT.map((d) => `test/${d}/**/*.test.ts`),
          isolate: false,
          setupFiles: ['test/support/shared-worker-guard.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: ['test/faults/**', ...UNIT.map((d) => `test/${d}/**`)],
          sequence: { groupOrder: 0 },
        },
      },
      // The fault suites inject deadlines of a fraction of a second and floods of thousands of messages: they
      // run one at a time, after the rest, so they measure the agent and not each other.
      { test: { ...shared, name: 'faults', include: ['test/faults/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
