import { defineConfig } from 'vitest/config';

// SWAN_DISCOVERY_URLS empty: auto-discovery probes no default port, in the suites and every agent or CLI they
// start, so an engine this machine happens to run (a llama-server on 8080) is never taken for a test's own.
const shared = { environment: 'node', testTimeout: 30_000, hookTimeout: 30_000, pool: 'forks', env: { SWAN_DISCOVERY_URLS: '' } } as const;

export default defineConfig({
  test: {
    // Most suites wait on sockets, child processes and engines rather than compute: on a 2-core machine
    // vitest's default (cores - 1 = one file at a time) leaves the CPU idle through those waits. Three
    // files at once took a CLI and conformance subset from 122 s to 49 s on the same loaded machine.
    maxWorkers: 3,
    projects: [
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts'], exclude: ['test/faults/**'], sequence: { groupOrder: 0 } } },
      // The fault suites inject deadlines of a fraction of a second and floods of thousands of messages: they
      // run one at a time, after the rest, so they measure the agent and not each other.
      { test: { ...shared, name: 'faults', include: ['test/faults/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 1 } } },
    ],
  },
});
