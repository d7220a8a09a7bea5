// Named credentials kept as hashes in a file several holders share (gateway keys and fleet tokens stand on it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialFile, credentialHash, newCredential, storedCredential, type StoredCredential } from '../../../src/core/config/credential-file';
import { FleetTokens } from '../../../src/core/fleet/tokens';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-credentials-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

const schema = z.array(storedCredential);
const open = (): CredentialFile<StoredCredential> => new CredentialFile(path.join(home, 'creds.json'), schema);

function stored(name: string): { secret: string; entry: StoredCredential } {
  const secret = newCredential('t-');
  return { secret, entry: { name, hash: credentialHash(secret), createdAt: 1 } };
}

describe('CredentialFile', () => {
  it('keeps only the hash, in a 0600 file, and matches the secret against it', () => {
    const a = open();
    const { secret, entry } = stored('ci');
    a.add(entry);
    const text = fs.readFileSync(path.join(home, 'creds.json'), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain(entry.hash);
    if (process.platform !== 'win32') expect(fs.statSync(path.join(home, 'creds.json')).mode & 0o777).toBe(0o600);
    expect(a.match(secret)?.name).toBe('ci');
    expect(a.match(`${secret}x`)).toBeUndefined();
  });

  it('what one holder adds or removes, another sees at its next look', () => {
    const a = open();
    const b = open();
    const { secret, entry } = stored('ci');
    a.add(entry);
    expect(b.has('ci')).toBe(true);
    expect(b.match(secret)?.name).toBe('ci');
    expect(a.remove('ci')).toBe(true);
    expect(b.holds(entry.hash)).toBe(false);
    expect(b.match(secret)).toBeUndefined();
    expect(b.remove('ci')).toBe(false);
  });

  it('keeps the last use it saw when another holder rewrites the file', () => {
    const a = open();
    const b = open();
    const first = stored('first');
    a.add(first.entry);
    expect(b.match(first.secret)?.lastUsedAt).toBeGreaterThan(0);
    const seen = b.list()[0]?.lastUsedAt;
    a.add(stored('second').entry); // the file changes under b, without b's last use in it
    const after = b.list();
    expect(after.map((e) => e.name)).toEqual(['first', 'second']);
    expect(after[0]?.lastUsedAt).toBe(seen);
  });

  it('reads a damaged or foreign file as empty', () => {
    fs.writeFileSync(path.join(home, 'creds.json'), '[{"name": "x", "hash": "not-a-hash", "createdAt": 1}]');
    expect(open().list()).toEqual([]);
    fs.writeFileSync(path.join(home, 'creds.json'), '{');
    expect(open().list()).toEqual([]);
  });
});

describe('FleetTokens on it', () => {
  it('a token made by one holder verifies in another, and stops at once when revoked', () => {
    const cli = new FleetTokens(home);
    const agent = new FleetTokens(home);
    const { token } = cli.create('rig-2');
    expect(agent.verify(token)).toEqual({ name: 'rig-2', scope: 'read' });
    expect(agent.list()[0]?.lastUsedAt).toBeGreaterThan(0);
    expect(() => agent.create('rig-2')).toThrow(expect.objectContaining({ code: 'fleet_token_name_taken' }));
    expect(() => agent.create('no spaces')).toThrow(expect.objectContaining({ code: 'fleet_token_name_invalid' }));
    expect(cli.revoke('rig-2')).toBe(true);
    expect(agent.verify(token)).toBeUndefined();
  });
});
