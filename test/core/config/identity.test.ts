// The node identity: one Ed25519 key pair made on first run, mode 0600, node_id = 64 hex chars,
// the same on every later load, and a damaged key file refused with a clear sentence.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateIdentity } from '../../../src/core/config/identity';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-id-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

describe('loadOrCreateIdentity', () => {
  it('creates the key once, owner-only, and node_id is the 64-hex public key', () => {
    const id = loadOrCreateIdentity(home);
    expect(id.file).toBe(path.join(home, 'node-key.pem'));
    expect(id.nodeId).toMatch(/^[0-9a-f]{64}$/);
    if (posix) expect(fs.statSync(id.file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(id.file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // node_id really is the public half of the stored key: a signature made with the private key
    // verifies against a public key rebuilt from node_id alone.
    const pub = crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(id.nodeId, 'hex').toString('base64url') }, format: 'jwk' });
    const sig = crypto.sign(null, Buffer.from('hello hub'), id.privateKey);
    expect(crypto.verify(null, Buffer.from('hello hub'), pub, sig)).toBe(true);
  });

  it('is stable across loads and does not rewrite the file', () => {
    const first = loadOrCreateIdentity(home);
    const pem = fs.readFileSync(first.file, 'utf8');
    const mtime = fs.statSync(first.file).mtimeMs;
    const second = loadOrCreateIdentity(home);
    expect(second.nodeId).toBe(first.nodeId);
    expect(fs.readFileSync(first.file, 'utf8')).toBe(pem);
    expect(fs.statSync(first.file).mtimeMs).toBe(mtime);
  });

  it('different homes are different nodes', () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-id-'));
    try {
      expect(loadOrCreateIdentity(other).nodeId).not.toBe(loadOrCreateIdentity(home).nodeId);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('creates a home folder that does not exist yet', () => {
    const nested = path.join(home, 'a', 'b');
    expect(loadOrCreateIdentity(nested).nodeId).toMatch(/^[0-9a-f]{64}$/);
    expect(fs.existsSync(path.join(nested, 'node-key.pem'))).toBe(true);
  });

  it('a corrupt key file is refused with the file and what to do, and is left as it was', () => {
    const file = path.join(home, 'node-key.pem');
    fs.writeFileSync(file, '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n', { mode: 0o600 });
    expect(() => loadOrCreateIdentity(home)).toThrow(`The node key ${file} cannot be read`);
    expect(() => loadOrCreateIdentity(home)).toThrow(/Restore it from a backup/);
    expect(fs.readFileSync(file, 'utf8')).toContain('not a key');
  });

  it('an empty key file is refused too', () => {
    fs.writeFileSync(path.join(home, 'node-key.pem'), '');
    expect(() => loadOrCreateIdentity(home)).toThrow(/cannot be read/);
  });

  it('a key of another type is refused instead of yielding a wrong node_id', () => {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    fs.writeFileSync(path.join(home, 'node-key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    expect(() => loadOrCreateIdentity(home)).toThrow(/is a ec key, not Ed25519/);
  });

  it.skipIf(!posix)('a key file readable by others is made owner-only again, same node', () => {
    const id = loadOrCreateIdentity(home);
    fs.chmodSync(id.file, 0o644);
    expect(loadOrCreateIdentity(home).nodeId).toBe(id.nodeId);
    expect(fs.statSync(id.file).mode & 0o777).toBe(0o600);
  });
});
