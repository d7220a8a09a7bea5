// The release channel (decision 0010) against a stand-in of GitHub's REST API on 127.0.0.1: the check reads
// the newest release, the download is verified against SHA256SUMS (a mismatch and an oversized file are
// refused with their codes and leave nothing behind), and a verified file is held while a request is in
// flight and ready once the last one finished.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLog } from '../../../src/core/base/log';
import { checkRelease, DEFAULT_FEED, feedRequestUrl, isGithubFeed } from '../../../src/core/update/check';
import { assetFor, parseSha256Sums, readGithubRelease } from '../../../src/core/update/github';
import { Updates } from '../../../src/core/update/updates';
import { parseReleaseKey, parseSignature, trustedReleaseKeys, type TrustedKey } from '../../../src/core/update/signing';
import { GithubReleasesStandIn, sha256 } from '../../support/github-releases';

let gh: GithubReleasesStandIn | undefined;
let dir = '';
afterEach(async () => {
  await gh?.close();
  gh = undefined;
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const tgz = Buffer.from('pretend npm tarball of 0.9.0 '.repeat(200));
const release = (extra: Partial<Parameters<typeof GithubReleasesStandIn.start>[0] & object> = {}) => ({
  tag: 'v0.9.0',
  assets: [
    { name: 'swan-provider-console-0.9.0.tgz', data: tgz },
    { name: 'swan-provider-console-0.9.0-x86_64.AppImage', data: Buffer.from('appimage') },
  ],
  ...extra,
});

function updates(
  feed: string,
  inFlight: { n: number; drained: () => Promise<void> } = { n: 0, drained: () => Promise.resolve() },
  maxBytes?: number,
  keys: TrustedKey[] = [],
): Updates {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-updates-'));
  return new Updates({
    dir: path.join(dir, 'updates'),
    mode: 'headless',
    current: '0.1.0',
    feed: () => feed,
    inFlight: () => inFlight.n,
    drained: inFlight.drained,
    log: memoryLog().child('update'),
    ...(maxBytes ? { maxBytes } : {}),
    keys,
  });
}

/** A release key pair as the project would make one: the public half written as the config takes it. */
function keyPair(): { privateKey: crypto.KeyObject; written: string } {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { privateKey, written: `ed25519:${raw.toString('base64')}` };
}

describe('signed checksum lists', () => {
  it('with a release key set: a list signed by it is verified and said so; unsigned or signed by another key, nothing is downloaded', async () => {
    const ours = keyPair();
    const theirs = keyPair();
    gh = await GithubReleasesStandIn.start(release({ signWith: ours.privateKey }));
    const u = updates(gh.feed, undefined, undefined, trustedReleaseKeys([ours.written]));
    await u.check();
    u.startDownload();
    const d = await u.whenReady();
    expect(d).toMatchObject({ state: 'ready', signature: 'verified', signedBy: ours.written.slice(8, 20) });
    fs.rmSync(dir, { recursive: true, force: true });

    gh.release = release({ tag: 'v0.9.1', signWith: theirs.privateKey });
    const other = updates(gh.feed, undefined, undefined, trustedReleaseKeys([ours.written]));
    await other.check();
    other.startDownload();
    expect(await other.whenReady()).toMatchObject({ state: 'error', code: 'update_signature_invalid' });
    // Refused before the file was asked for: nothing fetched, nothing written.
    expect(gh.hits.filter((h) => h.includes('0.9.1') && h.endsWith('.tgz'))).toEqual([]);
    expect(fs.existsSync(path.join(dir, 'updates')) ? fs.readdirSync(path.join(dir, 'updates')) : []).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });

    gh.release = release({ tag: 'v0.9.2' });
    gh.hits.length = 0;
    const unsigned = updates(gh.feed, undefined, undefined, trustedReleaseKeys([ours.written]));
    await unsigned.check();
    unsigned.startDownload();
    expect(await unsigned.whenReady()).toMatchObject({ state: 'error', code: 'update_unsigned' });
    expect(gh.hits.filter((h) => h.endsWith('.tgz'))).toEqual([]);
  });

  it("refuses an older signed list republished under a newer tag: the signed file must name the tag's version", async () => {
    const ours = keyPair();
    gh = await GithubReleasesStandIn.start(release({ tag: 'v0.9.5', signWith: ours.privateKey }));
    const u = updates(gh.feed, undefined, undefined, trustedReleaseKeys([ours.written]));
    await u.check();
    u.startDownload();
    expect(await u.whenReady()).toMatchObject({ state: 'error', code: 'update_signature_invalid', error: expect.stringContaining('not version 0.9.5') });
  });

  it('without a release key: the checksums are checked and the signature is said not to be', async () => {
    gh = await GithubReleasesStandIn.start(release({ signWith: keyPair().privateKey }));
    const u = updates(gh.feed);
    await u.check();
    u.startDownload();
    expect(await u.whenReady()).toMatchObject({ state: 'ready', signature: 'not_checked' });
  });

  it('reads keys and signatures strictly', () => {
    expect(() => parseReleaseKey('ed25519:short')).toThrow(/32-byte/);
    expect(() => parseReleaseKey(`rsa:${'A'.repeat(43)}=`)).toThrow();
    expect(parseSignature('not base64 at all')).toBeUndefined();
    expect(parseSignature(`${'A'.repeat(86)}==`)).toHaveLength(64);
  });
});

describe('the release channel: GitHub Releases', () => {
  it('is the default, and a repository URL of that shape on any host is one', () => {
    expect(isGithubFeed('')).toBe(true);
    expect(feedRequestUrl('', 'headless')).toBe(`${DEFAULT_FEED}/releases/latest`);
    expect(feedRequestUrl('http://127.0.0.1:9/repos/a/b/', 'desktop')).toBe('http://127.0.0.1:9/repos/a/b/releases/latest');
    expect(feedRequestUrl('https://ghe.example/api/v3/repos/a/b/releases/latest', 'headless')).toBe('https://ghe.example/api/v3/repos/a/b/releases/latest');
    expect(isGithubFeed('https://registry.npmjs.org/swan-provider-console')).toBe(false);
  });

  it('reads the newest release, the file for this system and whether SHA256SUMS is there', async () => {
    gh = await GithubReleasesStandIn.start(release());
    const r = await checkRelease({ current: '0.1.0', feed: gh.feed, mode: 'headless' });
    expect(r.view).toMatchObject({
      channel: 'github',
      code: 'update_available',
      available: true,
      latest: '0.9.0',
      release: { tag: 'v0.9.0', checksums: true, asset: { name: 'swan-provider-console-0.9.0.tgz', size: tgz.length } },
    });
    expect(gh.hits).toEqual([`/repos/${gh.owner}/${gh.repo}/releases/latest`]);
    expect((await checkRelease({ current: '0.9.0', feed: gh.feed, mode: 'headless' })).view).toMatchObject({
      code: 'update_up_to_date',
      available: false,
      latest: '0.9.0',
    });
  });

  it('says why when there is no release, or the answer is not a release', async () => {
    gh = await GithubReleasesStandIn.start(undefined);
    expect((await checkRelease({ current: '0.1.0', feed: gh.feed, mode: 'headless' })).view).toMatchObject({
      code: 'update_check_failed',
      errorCode: 'feed_not_found',
      available: false,
    });
    gh.release = release({ prerelease: true });
    expect((await checkRelease({ current: '0.1.0', feed: gh.feed, mode: 'headless' })).view).toMatchObject({ errorCode: 'feed_not_found' });
    expect(() => readGithubRelease('{"tag_name":"latest","assets":[]}')).toThrow(expect.objectContaining({ code: 'bad_version' }));
    expect(() => readGithubRelease('{"name":"x"}')).toThrow(expect.objectContaining({ code: 'feed_unreadable' }));
    const rel = readGithubRelease(
      JSON.stringify({
        tag_name: 'v1.2.3',
        assets: [
          { name: 'a.tgz', size: 3, state: 'open', browser_download_url: 'https://x/a.tgz' },
          { name: 'b.tgz', size: 3, browser_download_url: 'ftp://x/b' },
          'junk',
          { name: 'c.tgz', size: 3, state: 'uploaded', browser_download_url: 'https://x/c.tgz' },
        ],
      }),
    );
    expect(rel.assets.map((a) => a.name)).toEqual(['c.tgz']);
  });

  it("reads SHA256SUMS in both of sha256sum's forms and distrusts a name listed with two sums", () => {
    const a = 'a'.repeat(64);
    const b = 'B'.repeat(64);
    expect(parseSha256Sums(`${a}  x.tgz\n${b} *./y.exe\nnot a line\n`)).toEqual(
      new Map([
        ['x.tgz', a],
        ['y.exe', b.toLowerCase()],
      ]),
    );
    expect(() => parseSha256Sums(`${a}  x.tgz\n${b}  x.tgz\n`)).toThrow(expect.objectContaining({ code: 'feed_unreadable' }));
  });

  it('picks the file for each host and system', () => {
    const assets = ['s-1.0.0.tgz', 's-1.0.0-x86_64.AppImage', 's-1.0.0-arm64.AppImage', 's-1.0.0-x64.exe', 's-1.0.0-arm64.dmg', 's-1.0.0-x64.dmg'].map(
      (name) => ({ name, size: 1, url: `https://x/${name}` }),
    );
    expect(assetFor(assets, 'headless', 'linux', 'x64')?.name).toBe('s-1.0.0.tgz');
    expect(assetFor(assets, 'desktop', 'linux', 'arm64')?.name).toBe('s-1.0.0-arm64.AppImage');
    expect(assetFor(assets, 'desktop', 'linux', 'x64')?.name).toBe('s-1.0.0-x86_64.AppImage');
    expect(assetFor(assets, 'desktop', 'darwin', 'x64')?.name).toBe('s-1.0.0-x64.dmg');
    expect(assetFor(assets, 'desktop', 'win32', 'x64')?.name).toBe('s-1.0.0-x64.exe');
  });
});

describe('the download, checked with its checksums', () => {
  it('keeps a file that matches SHA256SUMS, 0600 in a 0700 folder, and is ready at once with no request in flight', async () => {
    gh = await GithubReleasesStandIn.start(release());
    const u = updates(gh.feed);
    await u.check();
    expect(u.startDownload()).toMatchObject({ state: 'downloading', code: 'update_downloading' });
    const d = await u.whenReady();
    expect(d).toMatchObject({ state: 'ready', code: 'update_ready', version: '0.9.0', sha256: sha256(tgz), bytes: tgz.length });
    expect(d.command).toBe(`npm install -g '${d.file}'`);
    expect(fs.readFileSync(d.file!)).toEqual(tgz);
    expect(fs.statSync(d.file!).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(d.file!)).mode & 0o777).toBe(0o700);
    expect(gh.hits).toContain(`/storage/SHA256SUMS`);
  });

  it('refuses a file whose sha256 does not match (update_checksum_mismatch) and removes it', async () => {
    gh = await GithubReleasesStandIn.start(
      release({ assets: [{ name: 'swan-provider-console-0.9.0.tgz', data: tgz, served: Buffer.from(tgz).fill(0x41, 0, 10) }] }),
    );
    const u = updates(gh.feed);
    await u.check();
    u.startDownload();
    expect(await u.whenReady()).toMatchObject({ state: 'error', code: 'update_checksum_mismatch' });
    expect(fs.readdirSync(path.join(dir, 'updates'))).toEqual([]);
  });

  it('bounds the size: more bytes than the release declared, or a release file over the ceiling (update_too_large)', async () => {
    gh = await GithubReleasesStandIn.start(release({ assets: [{ name: 'swan-provider-console-0.9.0.tgz', data: tgz, served: Buffer.concat([tgz, tgz]) }] }));
    const u = updates(gh.feed);
    await u.check();
    u.startDownload();
    expect(await u.whenReady()).toMatchObject({ state: 'error', code: 'update_too_large' });
    expect(fs.readdirSync(path.join(dir, 'updates'))).toEqual([]);
    fs.rmSync(dir, { recursive: true, force: true });

    gh.release = release();
    gh.hits.length = 0;
    const small = updates(gh.feed, undefined, 100);
    await small.check();
    small.startDownload();
    expect(await small.whenReady()).toMatchObject({ state: 'error', code: 'update_too_large' });
    expect(gh.hits.filter((h) => h.endsWith('.tgz'))).toEqual([]);
  });

  it('refuses a release without SHA256SUMS, and one without a file for this system', async () => {
    gh = await GithubReleasesStandIn.start(release({ sums: false }));
    const u = updates(gh.feed);
    await u.check();
    expect(u.startDownload()).toMatchObject({ state: 'error', code: 'update_no_checksums' });
    gh.release = release({ tag: 'v0.9.1', assets: [{ name: 'swan-provider-console-0.9.1.dmg', data: Buffer.from('x') }] });
    await u.check();
    expect(u.startDownload()).toMatchObject({ state: 'error', code: 'update_no_asset' });
  });
});

describe('never mid-request', () => {
  it('holds a verified file while a request is in flight, ready once the last one finished', async () => {
    gh = await GithubReleasesStandIn.start(release());
    let finish!: () => void;
    const running = { n: 2, drained: () => new Promise<void>((r) => (finish = r)) };
    const u = updates(gh.feed, running);
    const seen: string[] = [];
    u.on('download', (d) => seen.at(-1) !== d.code && seen.push(d.code!));
    await u.check();
    u.startDownload();
    const held = await new Promise<unknown>((resolve) => u.on('download', (d) => d.state === 'held' && resolve(d)));
    expect(held).toMatchObject({ state: 'held', code: 'update_held_requests_in_flight', inFlight: 2, sha256: sha256(tgz) });
    expect(u.status()).toMatchObject({ download: { code: 'update_held_requests_in_flight' } });
    running.n = 0;
    finish();
    expect(await u.whenReady()).toMatchObject({ state: 'ready', code: 'update_ready' });
    expect(seen).toEqual(['update_available', 'update_downloading', 'update_downloaded', 'update_held_requests_in_flight', 'update_ready']);
  });
});
