// FileSecretStore: values in a 0600 JSON file, written atomically (temp file + rename), read back by a
// new store, and a corrupt file treated as empty.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileSecretStore } from '../../../src/core/config/secrets';

let home: string;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-secrets-'));
});
afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

const posix = process.platform !== 'win32';
const file = (): string => path.join(home, 'secrets.json');

describe('FileSecretStore', () => {
  it('starts empty, says it is a file store, and writes nothing until a value is set', () => {
    const s = new FileSecretStore(home);
    expect(s.kind).toBe('file');
    expect(s.get('providerKey')).toBeUndefined();
    expect(fs.existsSync(file())).toBe(false);
  });

  it('set writes a 0600 file that a new store reads back', () => {
    const s = new FileSecretStore(home);
    s.set('providerKey', 'sk-prov-secret-value-1');
    s.set('other', 'x');
    if (posix) expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(file(), 'utf8'))).toEqual({ providerKey: 'sk-prov-secret-value-1', other: 'x' });
    const again = new FileSecretStore(home);
    expect(again.get('providerKey')).toBe('sk-prov-secret-value-1');
    expect(again.get('other')).toBe('x');
  });

  it('overwrites and deletes, and the deletion survives a reload', () => {
    const s = new FileSecretStore(home);
    s.set('providerKey', 'one');
    s.set('providerKey', 'two');
    s.set('keep', 'k');
    s.delete('providerKey');
    expect(s.get('providerKey')).toBeUndefined();
    const again = new FileSecretStore(home);
    expect(again.get('providerKey')).toBeUndefined();
    expect(again.get('keep')).toBe('k');
  });

  it('writes atomically: a new file replaces the old one by rename, no temp file is left', () => {
    const s = new FileSecretStore(home);
    s.set('a', '1');
    const before = fs.statSync(file()).ino;
    s.set('a', '2');
    expect(fs.statSync(file()).ino).not.toBe(before);
    expect(fs.readdirSync(home)).toEqual(['secrets.json']);
  });

  it.skipIf(!posix)('a stale temp file with a loose mode does not make the secrets file readable by others', () => {
    fs.writeFileSync(`${file()}.tmp`, 'old', { mode: 0o644 });
    fs.chmodSync(`${file()}.tmp`, 0o644);
    new FileSecretStore(home).set('providerKey', 'sk-prov-secret-value-2');
    expect(fs.statSync(file()).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['not JSON', '{"providerKey": "sk-'],
    ['an array', '["sk-prov-x"]'],
    ['a string', '"sk-prov-x"'],
    ['null', 'null'],
  ])('a corrupt file (%s) reads as empty', (_name, text) => {
    fs.writeFileSync(file(), text);
    const s = new FileSecretStore(home);
    expect(s.get('providerKey')).toBeUndefined();
    s.set('providerKey', 'fresh');
    expect(new FileSecretStore(home).get('providerKey')).toBe('fresh');
  });

  it('keeps string values only', () => {
    fs.writeFileSync(file(), JSON.stringify({ providerKey: 'ok', n: 5, o: { a: 1 } }));
    const s = new FileSecretStore(home);
    expect(s.get('providerKey')).toBe('ok');
    expect(s.get('n')).toBeUndefined();
    expect(s.get('o')).toBeUndefined();
  });

  it('uses another file name when told, and creates the home folder on first write', () => {
    const nested = path.join(home, 'deeper');
    const s = new FileSecretStore(nested, 'vault.json');
    s.set('x', 'y');
    expect(fs.existsSync(path.join(nested, 'vault.json'))).toBe(true);
    expect(new FileSecretStore(nested, 'vault.json').get('x')).toBe('y');
  });
});
