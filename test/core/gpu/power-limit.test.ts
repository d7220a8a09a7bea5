// The GPU power limit through nvidia-smi (the e2e stand-in, which answers -pl with the driver's exit codes):
// read, set within range, refused outside it before the tool runs, and a user without the rights told so.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PowerLimitError, readPowerLimits, setPowerLimit } from '../../../src/core/gpu/power-limit';
import { repoRoot } from '../../support/traces';
import { invokeSchemas } from '../../../src/shared/bridge/schemas';

const FAKE_GPU = path.join(repoRoot, 'e2e', 'support', 'fake-gpu');
let dir = '';
let env: NodeJS.ProcessEnv = {};
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-pl-'));
  env = { PATH: `${FAKE_GPU}${path.delimiter}${path.dirname(process.execPath)}`, FAKE_GPU_PL_FILE: path.join(dir, 'pl'), FAKE_GPU_COUNT: '2' };
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function refusal(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof PowerLimitError) return e.code;
    throw e;
  }
  throw new Error('expected a PowerLimitError');
}

describe('GPU power limit', () => {
  it('reads each GPU and sets one within its range', async () => {
    expect(await readPowerLimits(env)).toEqual([
      { index: 0, limitW: 350, defaultW: 350, minW: 100, maxW: 350 },
      { index: 1, limitW: 350, defaultW: 350, minW: 100, maxW: 350 },
    ]);
    expect(await setPowerLimit(1, 250, env)).toEqual({ index: 1, limitW: 250, defaultW: 350, minW: 100, maxW: 350 });
  });

  it('refuses a limit outside the range, and a GPU that is not there, before running -pl', async () => {
    expect(await refusal(setPowerLimit(0, 50, env))).toBe('out_of_range');
    expect(await refusal(setPowerLimit(5, 200, env))).toBe('no_gpu');
    expect(fs.existsSync(path.join(dir, 'pl'))).toBe(false);
  });

  it('says an administrator is needed when the driver refuses the user (exit code 4), with the command', async () => {
    const denied = { ...env, FAKE_GPU_PL_DENY: '1' };
    const e = await setPowerLimit(0, 200, denied).catch((x: unknown) => x as PowerLimitError);
    expect(e).toBeInstanceOf(PowerLimitError);
    expect((e as PowerLimitError).code).toBe('needs_admin');
    expect((e as PowerLimitError).message).toContain('sudo nvidia-smi -i 0 -pl 200');
    expect((await readPowerLimits(env))[0]!.limitW).toBe(350);
  });

  it('without nvidia-smi: nothing to read, and setting says so', async () => {
    const none = { PATH: dir };
    expect(await readPowerLimits(none)).toEqual([]);
    expect(await refusal(setPowerLimit(0, 200, none))).toBe('no_tool');
  });
});

describe('gpu.setPowerLimit arguments', () => {
  it("takes a limit only with the owner's consent, a whole number of watts, for a GPU index", () => {
    const s = invokeSchemas['gpu.setPowerLimit'];
    expect(s.safeParse({ index: 0, watts: 250, consent: true }).success).toBe(true);
    expect(s.safeParse({ index: 0, watts: 250 }).success).toBe(false);
    expect(s.safeParse({ index: 0, watts: 250, consent: false }).success).toBe(false);
    expect(s.safeParse({ index: 0, watts: 250.5, consent: true }).success).toBe(false);
    expect(s.safeParse({ index: -1, watts: 250, consent: true }).success).toBe(false);
    expect(s.safeParse({ index: 0, watts: 250, consent: true, extra: 1 }).success).toBe(false);
  });
});
