// The update check as the agent offers it: through the bridge with the feed from Settings, and the release
// channel's download on the headless agent: verified, ready, and the install left to the owner's command
// (the check itself against local feeds: test/core/update/check.test.ts and release-channel.test.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GithubReleasesStandIn } from '../../support/github-releases';
import { startStack, type Stack } from '../../support/stack';

let server: http.Server | undefined;
let gh: GithubReleasesStandIn | undefined;
let stack: Stack | undefined;
const hits: string[] = [];
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  if (server) await new Promise<void>((r) => server!.close(() => r()));
  server = undefined;
  await gh?.close();
  gh = undefined;
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

describe('update check through the bridge', () => {
  it('runs through the bridge with the feed from Settings', async () => {
    const base = await feed({ '/p': { body: npmMeta('9.0.0') } });
    stack = await startStack({ hub: false, start: false });
    expect(await stack.agent.invoke('settings.save', { patch: { updateFeedUrl: 'ftp://x' } })).toMatchObject({
      ok: false,
      errors: { updateFeedUrl: expect.any(String) },
    });
    expect(await stack.agent.invoke('settings.save', { patch: { updateFeedUrl: `${base}/p` } })).toEqual({ ok: true });
    expect(await stack.agent.invoke('update.check', {})).toMatchObject({ latest: '9.0.0', available: true, feed: `${base}/p` });
    const info = (await stack.agent.invoke('app.info', {})) as { version: string; build: string };
    expect(info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(info.build).toContain(`Node ${process.versions.node}`);
  });
});

describe('the headless agent and downloads', () => {
  it('downloads and verifies on the release channel, and leaves the install to the command it names', async () => {
    stack = await startStack({});
    await expect(stack.agent.invoke('update.download', {})).rejects.toMatchObject({ code: 'not_ready' });
    await expect(stack.agent.invoke('update.install', { when: 'now' })).rejects.toMatchObject({ code: 'not_ready' });
    expect(await stack.agent.invoke('update.status', {})).toBeNull();
    gh = await GithubReleasesStandIn.start({ tag: 'v99.0.0', assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: Buffer.from('tarball') }] });
    expect(await stack.agent.invoke('settings.save', { patch: { updateFeedUrl: gh.feed } })).toEqual({ ok: true });
    expect(await stack.agent.invoke('update.check', {})).toMatchObject({
      channel: 'github',
      code: 'update_available',
      latest: '99.0.0',
      download: { state: 'available' },
    });
    const ready = new Promise<unknown>((resolve) => {
      const off = stack!.agent.subscribe((e) => {
        if (e.type === 'update.download' && e.download.state === 'ready') {
          off();
          resolve(e.download);
        }
      });
    });
    expect(await stack.agent.invoke('update.download', {})).toMatchObject({ code: 'update_downloading' });
    expect(await ready).toMatchObject({ code: 'update_ready', command: expect.stringContaining('swan-provider-console-99.0.0.tgz') });
    expect(await stack.agent.invoke('update.status', {})).toMatchObject({ latest: '99.0.0', download: { code: 'update_ready' } });
    await expect(stack.agent.invoke('update.install', { when: 'now' })).rejects.toMatchObject({
      code: 'not_supported',
      message: expect.stringContaining('npm install -g'),
    });
  });
});
