// The update check against local feeds on 127.0.0.1: npm registry metadata (a feed the owner may set)
// and an electron-builder generic feed folder (latest-linux.yml …). It only reads; it never downloads. The
// default channel, GitHub Releases, and its verified downloads: release-channel.test.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkForUpdate,
  compareVersions,
  DEFAULT_FEED,
  feedRequestUrl,
  feedUrlProblem,
  genericChannelFile,
  genericFeedFolder,
  latestFromFeed,
} from '../../../src/core/update/check';

let server: http.Server | undefined;
const hits: string[] = [];
afterEach(async () => {
  if (server) await new Promise<void>((r) => server!.close(() => r()));
  server = undefined;
  hits.length = 0;
});

async function feed(routes: Record<string, { status?: number; type?: string; body: string }>): Promise<string> {
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const r = routes[req.url ?? ''];
    if (!r) return void res.writeHead(404).end('not found');
    res.writeHead(r.status ?? 200, { 'content-type': r.type ?? 'application/json' }).end(r.body);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const npmMeta = (latest: string) =>
  JSON.stringify({ name: 'swan-provider-console', 'dist-tags': { latest }, versions: { [latest]: { dist: { tarball: 'http://x/y.tgz' } } } });

describe('versions and feeds', () => {
  it('compares semantic versions, pre-releases before releases', () => {
    expect(compareVersions('0.2.0', '0.1.9')).toBeGreaterThan(0);
    expect(compareVersions('0.1.0', '0.1.0')).toBe(0);
    expect(compareVersions('1.0.0-beta.1', '1.0.0')).toBeLessThan(0);
    expect(compareVersions('v1.10.0', '1.9.0')).toBeGreaterThan(0);
    expect(() => compareVersions('latest', '1.0.0')).toThrow(expect.objectContaining({ code: 'bad_version' }));
  });

  it('reads npm metadata and latest.yml', () => {
    expect(latestFromFeed(npmMeta('0.3.1'))).toBe('0.3.1');
    expect(latestFromFeed("version: 0.4.0\nfiles:\n  - url: a.AppImage\npath: a.AppImage\nreleaseDate: '2026-11-30T10:00:00.000Z'\n")).toBe('0.4.0');
    expect(() => latestFromFeed('<html>')).toThrow(expect.objectContaining({ code: 'feed_unreadable' }));
    expect(() => latestFromFeed('{"dist-tags":{}}')).toThrow(expect.objectContaining({ code: 'feed_unreadable' }));
    expect(() => latestFromFeed('{"version":"soon"}')).toThrow(expect.objectContaining({ code: 'bad_version' }));
  });

  it('validates the feed URL and picks the generic feed file per platform', () => {
    expect(feedUrlProblem('')).toBeUndefined();
    expect(feedUrlProblem('file:///etc/passwd')).toMatch(/https:\/\//);
    expect(feedUrlProblem('https://a:b@x.example/')).toMatch(/no user name/);
    expect(genericChannelFile('linux')).toBe('latest-linux.yml');
    expect(genericChannelFile('darwin')).toBe('latest-mac.yml');
    expect(genericChannelFile('win32')).toBe('latest.yml');
    expect(feedRequestUrl('https://dl.example/app/', 'desktop', 'linux')).toBe('https://dl.example/app/latest-linux.yml');
    expect(feedRequestUrl('https://dl.example/app/', 'headless', 'linux')).toBe('https://dl.example/app/');
    expect(feedRequestUrl(DEFAULT_FEED, 'desktop', 'linux')).toBe(`${DEFAULT_FEED}/releases/latest`);
  });
});

describe('which feeds the desktop app hands to electron-updater', () => {
  it('takes a folder or a latest*.yml URL as its folder, and leaves npm metadata to the plain check', () => {
    expect(genericFeedFolder('https://dl.example.com/swan')).toBe('https://dl.example.com/swan/');
    expect(genericFeedFolder('https://dl.example.com/swan/latest-linux.yml?x=1')).toBe('https://dl.example.com/swan/');
    expect(genericFeedFolder('http://127.0.0.1:8080/latest.yml')).toBe('http://127.0.0.1:8080/');
    expect(genericFeedFolder('')).toBeUndefined();
    expect(genericFeedFolder(DEFAULT_FEED)).toBeUndefined();
    expect(genericFeedFolder('https://registry.npmjs.org/other-name')).toBeUndefined();
    expect(genericFeedFolder('https://example.com/meta.json')).toBeUndefined();
    expect(genericFeedFolder('ftp://example.com/')).toBeUndefined();
  });
});

describe('checkForUpdate against a local feed', () => {
  it('says a newer version is available from npm metadata', async () => {
    const base = await feed({ '/swan-provider-console': { body: npmMeta('0.2.0') } });
    const r = await checkForUpdate({ current: '0.1.0', feed: `${base}/swan-provider-console`, mode: 'headless' });
    expect(r).toMatchObject({ current: '0.1.0', latest: '0.2.0', available: true });
    expect(r.error).toBeUndefined();
    expect(hits).toEqual(['/swan-provider-console']); // one metadata read, no tarball
  });

  it('says up to date when the feed has our version', async () => {
    const base = await feed({ '/p': { body: npmMeta('0.1.0') } });
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/p`, mode: 'headless' })).toMatchObject({ latest: '0.1.0', available: false });
  });

  it('reads a desktop generic feed folder', async () => {
    const file = genericChannelFile();
    const base = await feed({ [`/app/${file}`]: { type: 'text/yaml', body: 'version: 1.0.0\npath: x\n' } });
    const r = await checkForUpdate({ current: '0.1.0', feed: `${base}/app/`, mode: 'desktop' });
    expect(r).toMatchObject({ latest: '1.0.0', available: true });
  });

  it('explains a 404, garbage and a dead feed instead of throwing', async () => {
    const base = await feed({ '/junk': { type: 'text/html', body: '<html>hi</html>' } });
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/missing`, mode: 'headless' })).toMatchObject({
      available: false,
      errorCode: 'feed_not_found',
    });
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/junk`, mode: 'headless' })).toMatchObject({
      available: false,
      errorCode: 'feed_unreadable',
    });
    const dead = await checkForUpdate({ current: '0.1.0', feed: 'http://127.0.0.1:9/x', mode: 'headless' });
    expect(dead).toMatchObject({ available: false, errorCode: 'feed_unreachable' });
    // The owner is told what to check.
    expect(dead.error).toContain('Check the feed address in Settings');
  });
});
