// The node identity in the Go provider's form: a raw 32-byte secp256k1 key in <home>/private_key
// (0600), node_id = the uncompressed public key (130 hex, "04…"); the Go provider's own key reused
// ($CP_PATH/private_key, default ~/.swan/computing); our old Ed25519 key migrated once (kept as .bak).
// Hermetic: every call gets an env whose HOME / CP_PATH are temp folders, never the real ~/.swan.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { goProviderKeyPath, loadOrCreateIdentity } from '../../../src/core/config/identity';

let home: string;
let userHome: string;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-id-'));
  userHome = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-user-'));
  env = { HOME: userHome };
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(userHome, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';

/** The public key of a raw private key, computed independently (JWK import + export). */
function publicOf(raw: Buffer): string {
  const ecdh = crypto.createECDH('secp256k1');
  ecdh.setPrivateKey(raw);
  const key = crypto.createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'secp256k1',
      d: raw.toString('base64url'),
      x: ecdh.getPublicKey().subarray(1, 33).toString('base64url'),
      y: ecdh.getPublicKey().subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const jwk = crypto.createPublicKey(key).export({ format: 'jwk' });
  return `04${Buffer.from(jwk.x!, 'base64url').toString('hex')}${Buffer.from(jwk.y!, 'base64url').toString('hex')}`;
}

// The seed's example node (HUB-PROTOCOL.md): the private key 1 has the curve's generator G as its public key.
const KEY_ONE = Buffer.alloc(32);
KEY_ONE[31] = 1;
const G = '0479be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8';

describe('loadOrCreateIdentity', () => {
  it('creates a raw 32-byte secp256k1 key once, owner-only; node_id is the 130-hex uncompressed public key', () => {
    const id = loadOrCreateIdentity(home, env);
    expect(id.file).toBe(path.join(home, 'private_key'));
    expect(id.nodeId).toMatch(/^04[0-9a-f]{128}$/);
    expect(id.source).toBe('generated');
    const raw = fs.readFileSync(id.file);
    expect(raw).toHaveLength(32);
    if (posix) expect(fs.statSync(id.file).mode & 0o777).toBe(0o600);
    expect(id.nodeId).toBe(publicOf(raw));
    // A signature with the key verifies against the node id alone.
    const pub = crypto.createPublicKey({
      key: {
        kty: 'EC',
        crv: 'secp256k1',
        x: Buffer.from(id.nodeId.slice(2, 66), 'hex').toString('base64url'),
        y: Buffer.from(id.nodeId.slice(66), 'hex').toString('base64url'),
      },
      format: 'jwk',
    });
    const priv = crypto.createPrivateKey({ key: { ...pub.export({ format: 'jwk' }), d: raw.toString('base64url') }, format: 'jwk' });
    expect(crypto.verify('sha256', Buffer.from('hello hub'), pub, crypto.sign('sha256', Buffer.from('hello hub'), priv))).toBe(true);
  });

  it('gives the known public key for a known private key (secp256k1 generator for k = 1)', () => {
    fs.writeFileSync(path.join(home, 'private_key'), KEY_ONE, { mode: 0o600 });
    expect(loadOrCreateIdentity(home, env).nodeId).toBe(G);
  });

  it('is stable across loads and does not rewrite the file', () => {
    const first = loadOrCreateIdentity(home, env);
    const bytes = fs.readFileSync(first.file);
    const mtime = fs.statSync(first.file).mtimeMs;
    const second = loadOrCreateIdentity(home, env);
    expect(second.nodeId).toBe(first.nodeId);
    expect(second.source).toBe('generated');
    expect(fs.readFileSync(first.file)).toEqual(bytes);
    expect(fs.statSync(first.file).mtimeMs).toBe(mtime);
  });

  it('reuses the Go provider key at ~/.swan/computing/private_key, copies it home, and says so', () => {
    const goKey = path.join(userHome, '.swan', 'computing', 'private_key');
    fs.mkdirSync(path.dirname(goKey), { recursive: true });
    fs.writeFileSync(goKey, KEY_ONE, { mode: 0o644 }); // the Go provider writes it 0644
    const id = loadOrCreateIdentity(home, env);
    expect(id.nodeId).toBe(G);
    expect(id).toMatchObject({ source: 'computing-provider', from: goKey });
    expect(id.notes.join('\n')).toMatch(/reusing the Go computing-provider's node key from .*private_key/);
    expect(fs.readFileSync(path.join(home, 'private_key'))).toEqual(KEY_ONE);
    if (posix) expect(fs.statSync(path.join(home, 'private_key')).mode & 0o777).toBe(0o600);
    // Later loads: the same node, still said to come from the Go provider.
    expect(loadOrCreateIdentity(home, env)).toMatchObject({ nodeId: G, source: 'computing-provider', from: goKey, notes: [] });
  });

  it('CP_PATH wins over the default folder, and a hex-text key is accepted too', () => {
    const cp = path.join(userHome, 'cp');
    fs.mkdirSync(cp);
    fs.writeFileSync(path.join(cp, 'private_key'), `0x${KEY_ONE.toString('hex')}\n`);
    expect(goProviderKeyPath({ ...env, CP_PATH: cp })).toBe(path.join(cp, 'private_key'));
    expect(goProviderKeyPath({ ...env, CP_PATH: '~/cp' })).toBe(path.join(cp, 'private_key'));
    expect(loadOrCreateIdentity(home, { ...env, CP_PATH: cp })).toMatchObject({ nodeId: G, source: 'computing-provider' });
  });

  it('without a HOME in the env given, the Go folder is not looked up at all', () => {
    expect(goProviderKeyPath({})).toBeUndefined();
    expect(loadOrCreateIdentity(home, {}).source).toBe('generated');
  });

  it('migrates our old Ed25519 key once, deterministically, keeping the old file as .bak', () => {
    const { privateKey } = crypto.generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const legacy = path.join(home, 'node-key.pem');
    fs.writeFileSync(legacy, pem, { mode: 0o600 });
    const id = loadOrCreateIdentity(home, env);
    expect(id.nodeId).toMatch(/^04[0-9a-f]{128}$/);
    expect(id).toMatchObject({ source: 'migrated', from: `${legacy}.bak` });
    expect(fs.existsSync(legacy)).toBe(false);
    expect(fs.readFileSync(`${legacy}.bak`, 'utf8')).toBe(pem);
    expect(loadOrCreateIdentity(home, env).nodeId).toBe(id.nodeId);
    // The same old key migrates to the same new node in another home (a restore from backup).
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-id-'));
    try {
      fs.writeFileSync(path.join(other, 'node-key.pem'), pem);
      expect(loadOrCreateIdentity(other, env).nodeId).toBe(id.nodeId);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('a Go provider key wins over our old Ed25519 key (the node the hub knows), and the old key is retired', () => {
    fs.writeFileSync(path.join(home, 'node-key.pem'), crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    fs.mkdirSync(path.join(userHome, '.swan', 'computing'), { recursive: true });
    fs.writeFileSync(path.join(userHome, '.swan', 'computing', 'private_key'), KEY_ONE);
    expect(loadOrCreateIdentity(home, env)).toMatchObject({ nodeId: G, source: 'computing-provider' });
    expect(fs.existsSync(path.join(home, 'node-key.pem.bak'))).toBe(true);
  });

  it('different homes are different nodes', () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-id-'));
    try {
      expect(loadOrCreateIdentity(other, env).nodeId).not.toBe(loadOrCreateIdentity(home, env).nodeId);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });

  it('creates a home folder that does not exist yet', () => {
    const nested = path.join(home, 'a', 'b');
    expect(loadOrCreateIdentity(nested, env).nodeId).toMatch(/^04[0-9a-f]{128}$/);
    expect(fs.existsSync(path.join(nested, 'private_key'))).toBe(true);
  });

  it.each([
    ['garbage', Buffer.from('not a key at all'), 'key_malformed'],
    ['empty', Buffer.alloc(0), 'key_malformed'],
    ['zero (outside the curve range)', Buffer.alloc(32), 'key_invalid'],
    ['the curve order itself', Buffer.from('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141', 'hex'), 'key_invalid'],
  ])('a %s key file is refused with its code and the file, and left as it was', (_name, bytes, code) => {
    const file = path.join(home, 'private_key');
    fs.writeFileSync(file, bytes, { mode: 0o600 });
    expect(() => loadOrCreateIdentity(home, env)).toThrow(expect.objectContaining({ code, file }));
    expect(fs.readFileSync(file)).toEqual(bytes);
  });

  it('a damaged Go key is refused rather than silently replaced by a new node', () => {
    fs.mkdirSync(path.join(userHome, '.swan', 'computing'), { recursive: true });
    fs.writeFileSync(path.join(userHome, '.swan', 'computing', 'private_key'), 'short');
    expect(() => loadOrCreateIdentity(home, env)).toThrow(
      expect.objectContaining({ code: 'key_malformed', file: path.join(userHome, '.swan', 'computing', 'private_key') }),
    );
    expect(fs.existsSync(path.join(home, 'private_key'))).toBe(false);
  });

  it.skipIf(!posix)('a key file readable by others is made owner-only again, same node', () => {
    const id = loadOrCreateIdentity(home, env);
    fs.chmodSync(id.file, 0o644);
    expect(loadOrCreateIdentity(home, env).nodeId).toBe(id.nodeId);
    expect(fs.statSync(id.file).mode & 0o777).toBe(0o600);
  });
});
