// One agent per home (issue 43): two agents on one home would share its node id (two hub connections
// that displace each other) and write one ledger together. The second start is refused in one line
// naming the home and the first agent's console, whatever console port it asked for; a lock left by an
// agent that was SIGKILLed does not keep the next start out.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_KEY, tempHome, until } from '../support/stack';
import { writeConfigToml } from '../support/config-toml';
import { killAgents, startAgent, type AgentChild } from '../support/cli/agent-child';

const homes: string[] = [];
afterEach(() => {
  killAgents();
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

const run = (home: string): AgentChild => startAgent(home, ['--no-discovery', '--console', '127.0.0.1:0']);

describe('two agents on one home', () => {
  it('the second is refused naming the home and the first one console; after a SIGKILL the next one starts', async () => {
    const home = tempHome('swan-two-agents-');
    homes.push(home);
    writeConfigToml(home, { Inference: { Enable: false, ApiKey: TEST_KEY }, Agent: { Discovery: false } });

    const first = run(home);
    // The console's one-time link is printed last, after the start-up lines.
    await until(
      () => /agent running/.test(first.stdout()) && /console: http/.test(first.stdout()),
      `the first agent running\n${first.stdout()}${first.stderr()}`,
      60_000,
    );
    const consoleUrl = /console: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(first.stdout())![1]!;

    const second = run(home);
    // Before this was refused, the second one ran too: wait for whichever comes first.
    await until(() => second.child.exitCode !== null || /agent running/.test(second.stdout()), 'the second agent exits or runs', 60_000);
    expect(second.stdout()).not.toMatch(/agent running/);
    expect((await second.exited).code).toBe(2);
    const lines = second
      .stderr()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines, second.stderr()).toHaveLength(1);
    expect(lines[0]).toContain(home);
    expect(lines[0]).toContain(consoleUrl);
    expect(lines[0]).toContain(`pid ${first.child.pid}`);
    expect(first.child.exitCode).toBeNull(); // the first one serves on

    // A crash leaves the lock behind; its holder is gone, so the next start takes it at once.
    first.child.kill('SIGKILL');
    await first.exited;
    const third = run(home);
    await until(() => /agent running/.test(third.stdout()), `the agent after a SIGKILL running\n${third.stdout()}${third.stderr()}`, 60_000);
    third.child.kill('SIGTERM');
    expect((await third.exited).code).toBe(0);
    expect(fs.existsSync(path.join(home, 'agent.json'))).toBe(false); // a clean stop lets the home go
  }, 180_000);
});
