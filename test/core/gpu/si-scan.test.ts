// The generic GPU scan runs systeminformation in a child process: the agent never loads it (about 10 MB
// of resident memory it would keep for good), and the scan's deadline is kept by killing the child.
// Run for real on this machine (no GPU, no vendor tool).
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { detectGpus } from '../../../src/core/gpu/detect';
import { scanWithSystemInformation } from '../../../src/core/gpu/si-scan';
import { memoryLog } from '../../../src/core/base/log';
import { makeFakeBin } from '../../support/gpu/fake-tools';
import { processesUsing } from '../../support/processes';

const require = createRequire(import.meta.url);
const SI_DIR = `${require.resolve('systeminformation').split('/systeminformation/')[0]}/systeminformation/`;

/** Whether this process has loaded any of systeminformation's files (import of CommonJS fills this cache too). */
function loadedHere(): boolean {
  return Object.keys(require.cache).some((file) => file.startsWith(SI_DIR));
}

describe('the generic GPU scan', () => {
  it('asks systeminformation in a child process: the agent process never loads it', async () => {
    expect(loadedHere()).toBe(false);
    const b = makeFakeBin(); // a PATH with no vendor tool, so detection falls through to the generic scan
    try {
      const log = memoryLog();
      const inv = await detectGpus({ env: b.env(), timeoutMs: 20_000, log: log.child('gpu') });
      // Whatever this machine has, every GPU found came from the generic scan, and nothing failed.
      expect(inv.gpus.every((g) => g.source === 'systeminformation')).toBe(true);
      expect(log.entries().filter((e) => e.level === 'warn')).toEqual([]);
    } finally {
      b.cleanup();
    }
    expect(loadedHere()).toBe(false);
  });

  it('keeps its deadline: the child is killed and the remark says so', async () => {
    const res = await scanWithSystemInformation(process.env, 1);
    expect(res.gpus).toEqual([]);
    expect(res.remarks).toHaveLength(1);
    expect(res.remarks[0]).toMatch(/^The generic GPU scan did not finish within /);
    expect(processesUsing(SI_DIR, { childrenOf: process.pid })).toEqual([]);
  });

  it('a scan that fails is logged as a warning, never thrown', async () => {
    const log = memoryLog();
    // NODE_OPTIONS the child cannot start with: the child exits non-zero before systeminformation runs.
    const res = await scanWithSystemInformation({ ...process.env, NODE_OPTIONS: '--no-such-flag' }, 20_000, log.child('gpu'));
    expect(res).toEqual({ gpus: [], remarks: [] });
    expect(log.entries().some((e) => e.level === 'warn' && e.msg.startsWith('systeminformation failed'))).toBe(true);
  });
});
