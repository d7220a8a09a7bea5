// Where an address points: loopback, the owner's network, the internet, or refused outright (link-local,
// cloud metadata, unspecified), in every spelling a URL parser lets through.
import { describe, expect, it } from 'vitest';
import { classifyHost, classifyIp } from '../../../src/core/http/address-class';

describe('classifyIp', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['192.168.1.20', 'lan'],
    ['10.0.0.5', 'lan'],
    ['172.20.1.1', 'lan'],
    ['100.101.102.103', 'lan'],
    ['fd12::1', 'lan'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2001:db8::1', 'public'],
    ['169.254.169.254', 'refused'],
    ['169.254.1.1', 'refused'],
    ['fe80::1', 'refused'],
    ['fe80::1%eth0', 'refused'],
    ['::ffff:169.254.169.254', 'refused'],
    ['::ffff:a9fe:a9fe', 'refused'],
    ['fd00:ec2::254', 'refused'],
    ['100.100.100.200', 'refused'],
    ['0.0.0.0', 'refused'],
    ['::', 'refused'],
    ['224.0.0.1', 'refused'],
    ['not-an-ip', 'refused'],
  ])('%s is %s', (ip, want) => expect(classifyIp(ip)).toBe(want));
});

describe('classifyHost', () => {
  it('reads URL hosts as the URL parser normalised them', async () => {
    for (const raw of ['http://169.254.169.254/', 'http://0xA9FEA9FE/', 'http://2852039166/', 'http://[::ffff:169.254.169.254]/', 'http://[fe80::1]/']) {
      expect(await classifyHost(new URL(raw).hostname), raw).toBe('refused');
    }
  });

  it('a name counts as the widest of what it resolves to; an unresolvable one is public', async () => {
    const resolver = async (h: string) =>
      ({ 'rig.lan': ['192.168.1.9'], 'mixed.example': ['192.168.1.9', '8.8.8.8'], 'meta.example': ['10.0.0.1', '169.254.169.254'] })[h] ??
      Promise.reject(new Error('ENOTFOUND'));
    expect(await classifyHost('rig.lan', resolver)).toBe('lan');
    expect(await classifyHost('mixed.example', resolver)).toBe('public');
    expect(await classifyHost('meta.example', resolver)).toBe('refused');
    expect(await classifyHost('nowhere.example', resolver)).toBe('public');
    expect(await classifyHost('localhost', resolver)).toBe('loopback');
  });
});
