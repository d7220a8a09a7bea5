// The addresses a console reads other rigs at: only what the owner typed, http(s), no credentials or
// query in them, never link-local or cloud metadata; plain http off this machine is flagged.
import { describe, expect, it } from 'vitest';
import { parseRigAddress } from '../../../src/core/fleet/rig-address';
import { splitBookmark } from '../../../src/core/fleet/fleet-reader';

function code(raw: string): string | undefined {
  try {
    parseRigAddress(raw);
    return undefined;
  } catch (e) {
    return (e as { code: string }).code;
  }
}

describe('parseRigAddress', () => {
  it('reads a typed address into a base without trailing slash, and flags plain http off this machine', () => {
    expect(parseRigAddress('192.168.1.20:7777')).toMatchObject({ base: 'http://192.168.1.20:7777', insecure: true });
    expect(parseRigAddress('http://127.0.0.1:7777/')).toMatchObject({ base: 'http://127.0.0.1:7777', insecure: false });
    expect(parseRigAddress('http://[::1]:7777')).toMatchObject({ base: 'http://[::1]:7777', insecure: false });
    expect(parseRigAddress('https://rigs.example.net/garage/')).toMatchObject({ base: 'https://rigs.example.net/garage', insecure: false });
  });

  it('refuses other schemes, credentials, a query or fragment, and empty input', () => {
    expect(code('ftp://rig:21')).toBe('fleet_address_invalid');
    expect(code('http://user:pw@rig:7777')).toBe('fleet_address_invalid');
    expect(code('http://rig:7777/?token=abc')).toBe('fleet_address_invalid');
    expect(code('http://rig:7777/#x')).toBe('fleet_address_invalid');
    expect(code('  ')).toBe('fleet_address_invalid');
    expect(code('http://')).toBe('fleet_address_invalid');
  });

  it('refuses link-local and cloud metadata addresses however they are spelled', () => {
    for (const a of [
      'http://169.254.169.254/',
      'http://0xA9FEA9FE/',
      'http://[fe80::1]:7777',
      'http://[::ffff:169.254.169.254]/',
      'http://100.100.100.200',
      'http://metadata.google.internal',
      'http://0.0.0.0:7777',
    ]) {
      expect(code(a), a).toBe('fleet_address_forbidden');
    }
  });
});

describe('splitBookmark', () => {
  it('splits a pasted bookmark into the address and its token', () => {
    expect(splitBookmark('http://rig:7777/?token=abc-DEF_123')).toEqual({ address: 'http://rig:7777/', token: 'abc-DEF_123' });
    expect(splitBookmark('http://rig:7777/?x=1&token=t%2Bk')).toEqual({ address: 'http://rig:7777/', token: 't+k' });
    expect(splitBookmark('http://rig:7777')).toEqual({ address: 'http://rig:7777' });
  });
});
