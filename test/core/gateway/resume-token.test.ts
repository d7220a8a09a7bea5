// The resume-token key file: one 32-byte key per home, 0600, reused across restarts, repaired when damaged.
// (GatewayKeys, which used to be tested here a second time, is tested in keys.test.ts.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadResumeKey, RESUME_KEY_FILE } from '../../../src/core/gateway/resume-token';

const homes: string[] = [];
const home = () => {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-keys-'));
  homes.push(h);
  return h;
};

afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

describe('resume-token key file', () => {
  it('is created once with mode 0600, reused, and repaired when it is not a key', () => {
    const h = home();
    const a = loadResumeKey(h);
    expect(a).toHaveLength(32);
    const file = path.join(h, RESUME_KEY_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(loadResumeKey(h).equals(a)).toBe(true);
    fs.chmodSync(file, 0o644);
    expect(loadResumeKey(h).equals(a)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    fs.writeFileSync(file, 'short');
    const b = loadResumeKey(h);
    expect(b).toHaveLength(32);
    expect(b.equals(a)).toBe(false);
  });
});
