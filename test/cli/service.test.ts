// The systemd unit `service install` writes: the agent starts with the node flags that hold its heap
// (AGENT_NODE_FLAGS, which V8 reads only when it makes the heap), and node accepts them.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { AGENT_NODE_FLAGS, readUnit, systemdUnit } from '../../src/cli/service';
import { BIN } from '../support/cli/cli';
import { STOP_DEADLINE_MS } from '../../src/cli/run';

describe('service unit', () => {
  const unit = systemdUnit({ home: '/h', console: '127.0.0.1:7777', tokenFile: '/h/console-token', node: '/usr/bin/node', bin: '/app/bin/swan-provider.js' });

  it('starts node with the heap flags before the entry, and the agent reads its own arguments back', () => {
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node --max-semi-space-size=2 --heap-growing-percent=25 \/app\/bin\/swan-provider\.js run --home "\/h" /m);
    expect(readUnit(unit)).toEqual({ console: '127.0.0.1:7777', tokenFile: '/h/console-token', home: '/h' });
  });

  it('a refused start (exit 2) is not restarted in a loop, and the stop timeout leaves room for the agent own 8 s deadline', () => {
    expect(unit).toMatch(/^RestartPreventExitStatus=2$/m);
    expect(Number(/^TimeoutStopSec=(\d+)$/m.exec(unit)?.[1])).toBeGreaterThan(STOP_DEADLINE_MS / 1000);
  });

  it('node accepts the flags, and they hold the young generation under a survivor-heavy load', () => {
    // Short-lived objects that survive a scavenge or two, as a streaming request's do.
    const churn =
      'let keep = []; for (let i = 0; i < 3e6; i++) { keep.push({ i, b: [i] }); if (keep.length > 20000) keep = []; }' +
      "process.stdout.write(String(require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576))";
    const newSpaceMb = (flags: readonly string[]) => Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' }));
    expect(newSpaceMb(AGENT_NODE_FLAGS)).toBeLessThanOrEqual(4);
    expect(execFileSync(process.execPath, [...AGENT_NODE_FLAGS, BIN, '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
