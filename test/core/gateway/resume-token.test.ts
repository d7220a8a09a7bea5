// Gateway API keys: shown once, stored hashed (0600), verified, revoked; every instance on the same
// home sees changes made by another (the CLI, the console and the running gateway share the file).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayKeys, KEY_PREFIX } from '../../../src/core/gateway/keys';
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

describe('GatewayKeys', () => {
  it('keeps only a hash, in a 0600 file; verifies and revokes', () => {
    const h = home();
    const keys = new GatewayKeys(h);
    const { key } = keys.create('laptop');
    expect(key.startsWith(KEY_PREFIX)).toBe(true);
    const file = path.join(h, 'gateway-keys.json');
    expect(fs.readFileSync(file, 'utf8')).not.toContain(key);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(keys.verify(key)).toBe('laptop');
    expect(keys.verify(`${key}x`)).toBeUndefined();
    expect(keys.verify('')).toBeUndefined();
    expect(keys.list()[0]?.lastUsedAt).toBeGreaterThan(0);
    expect(() => keys.create('laptop')).toThrow(/already exists/);
    expect(() => keys.create('bad name')).toThrow(/letters, digits/);
    expect(keys.revoke('laptop')).toBe(true);
    expect(keys.verify(key)).toBeUndefined();
    expect(keys.revoke('laptop')).toBe(false);
  });

  it('an instance sees keys created and revoked by another instance on the same home', () => {
    const h = home();
    const gateway = new GatewayKeys(h);
    const cli = new GatewayKeys(h);
    const { key } = cli.create('script');
    expect(gateway.verify(key)).toBe('script');
    expect(gateway.size).toBe(1);
    expect(cli.revoke('script')).toBe(true);
    expect(gateway.verify(key)).toBeUndefined();
    expect(gateway.list()).toEqual([]);
  });
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
