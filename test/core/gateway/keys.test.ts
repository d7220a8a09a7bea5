// Gateway keys: shown once at creation, only a SHA-256 kept (file 0600), verify, revoke, unique names.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayKeys, KEY_PREFIX } from '../../../src/core/gateway/keys';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-keys-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

const file = (): string => path.join(home, 'gateway-keys.json');
const posix = process.platform !== 'win32';

describe('GatewayKeys', () => {
  it('create returns the key once; the file holds only its sha256, mode 0600', () => {
    const keys = new GatewayKeys(home);
    const { name, key } = keys.create('laptop');
    expect(name).toBe('laptop');
    expect(key.startsWith(KEY_PREFIX)).toBe(true);
    expect(key.length).toBeGreaterThanOrEqual(KEY_PREFIX.length + 43); // 32 random bytes, base64url
    const text = fs.readFileSync(file(), 'utf8');
    expect(text).not.toContain(key);
    expect(text).not.toContain(key.slice(KEY_PREFIX.length));
    const stored = JSON.parse(text) as Array<{ name: string; hash: string; createdAt: number }>;
    expect(stored).toEqual([{ name: 'laptop', hash: crypto.createHash('sha256').update(key).digest('hex'), createdAt: expect.any(Number) }]);
    if (posix) expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
    // list never shows a key or a hash.
    expect(keys.list()).toEqual([{ name: 'laptop', createdAt: stored[0]!.createdAt }]);
  });

  it('two keys are different', () => {
    const keys = new GatewayKeys(home);
    expect(keys.create('a').key).not.toBe(keys.create('b').key);
    expect(keys.size).toBe(2);
  });

  it('verify names the key, refuses anything else, and records last use', () => {
    const keys = new GatewayKeys(home);
    const a = keys.create('a');
    const b = keys.create('b');
    expect(keys.verify(a.key)).toBe('a');
    expect(keys.verify(b.key)).toBe('b');
    expect(keys.verify(`${a.key}x`)).toBeUndefined();
    expect(keys.verify(a.key.slice(0, -1))).toBeUndefined();
    expect(keys.verify('')).toBeUndefined();
    expect(keys.verify(undefined)).toBeUndefined();
    expect(keys.verify(null)).toBeUndefined();
    // A stored hash is not a key.
    const hash = crypto.createHash('sha256').update(a.key).digest('hex');
    expect(keys.verify(hash)).toBeUndefined();
    expect(keys.list().find((k) => k.name === 'a')?.lastUsedAt).toBeGreaterThan(0);
    expect(keys.list().find((k) => k.name === 'b')?.lastUsedAt).toEqual(expect.any(Number));
  });

  it('a new instance verifies keys created by another (same file)', () => {
    const { key } = new GatewayKeys(home).create('phone');
    expect(new GatewayKeys(home).verify(key)).toBe('phone');
  });

  it('a key revoked or created through another instance takes effect here at once', () => {
    const ui = new GatewayKeys(home);
    const gateway = new GatewayKeys(home);
    const { key } = ui.create('shared');
    expect(gateway.verify(key)).toBe('shared');
    expect(gateway.size).toBe(1);
    expect(new GatewayKeys(home).revoke('shared')).toBe(true);
    expect(gateway.verify(key)).toBeUndefined();
    expect(ui.list()).toEqual([]);
    expect(gateway.list()).toEqual([]);
  });

  it('revoke removes the key for good; revoking an unknown name says false', () => {
    const keys = new GatewayKeys(home);
    const { key } = keys.create('a');
    keys.create('b');
    expect(keys.revoke('a')).toBe(true);
    expect(keys.verify(key)).toBeUndefined();
    expect(keys.list().map((k) => k.name)).toEqual(['b']);
    expect(new GatewayKeys(home).verify(key)).toBeUndefined();
    expect(keys.revoke('a')).toBe(false);
    expect(keys.revoke('nobody')).toBe(false);
  });

  it('a name can be reused after its key is revoked', () => {
    const keys = new GatewayKeys(home);
    const first = keys.create('a');
    keys.revoke('a');
    const second = keys.create('a');
    expect(keys.verify(second.key)).toBe('a');
    expect(keys.verify(first.key)).toBeUndefined();
  });

  it('duplicate names are refused, the existing key kept', () => {
    const keys = new GatewayKeys(home);
    const { key } = keys.create('dup');
    expect(() => keys.create('dup')).toThrow(expect.objectContaining({ code: 'key_name_taken' }));
    expect(keys.size).toBe(1);
    expect(keys.verify(key)).toBe('dup');
  });

  it.each(['', 'has space', 'x'.repeat(65), 'é', 'a/b'])('bad name %j is refused', (name) => {
    const keys = new GatewayKeys(home);
    expect(() => keys.create(name)).toThrow(expect.objectContaining({ code: 'key_name_invalid' }));
    expect(fs.existsSync(file())).toBe(false);
  });

  it('a damaged file reads as no keys (nothing verifies)', () => {
    fs.writeFileSync(file(), '[{"name": "x", "hash": "zz"}]');
    const keys = new GatewayKeys(home);
    expect(keys.size).toBe(0);
    expect(keys.verify('sk-swan-anything')).toBeUndefined();
  });

  it.skipIf(!posix)('a stale temp file with a loose mode does not loosen the keys file', () => {
    fs.writeFileSync(`${file()}.tmp`, 'old');
    fs.chmodSync(`${file()}.tmp`, 0o644);
    new GatewayKeys(home).create('a');
    expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
  });
});
