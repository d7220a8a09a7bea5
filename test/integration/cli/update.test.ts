// `swan-provider update --check` and `swan-provider update` as a user runs them (the built CLI, a child
// process) against a stand-in of the release channel, GitHub's REST API, on 127.0.0.1: the stable code and
// the exit code say where things stand; a download is verified against SHA256SUMS or removed, and with an
// agent running on the home it is held until that agent says no request is in flight.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serveHomeQuestions } from '../../../src/core/config/home-questions';
import type { UpdateReport } from '../../../src/cli/update-command';
import { runCli } from '../../support/cli/cli';
import { GithubReleasesStandIn, sha256 } from '../../support/github-releases';

let gh: GithubReleasesStandIn | undefined;
let home = '';
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  stop = undefined;
  await gh?.close();
  gh = undefined;
  if (home) fs.rmSync(home, { recursive: true, force: true });
  home = '';
});

const tgz = Buffer.from('the npm tarball of 99.0.0 '.repeat(100));
const newer = { tag: 'v99.0.0', assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: tgz }] };

async function update(args: string[]): Promise<{ code: number; report: UpdateReport; stderr: string }> {
  const r = await runCli(['update', '--home', home, '--json', ...args]);
  return { code: r.code, report: JSON.parse(r.stdout) as UpdateReport, stderr: r.stderr };
}

// Each test runs the CLI as a child process (tsx in a checkout): up to three runs, slow on a loaded machine.
describe('swan-provider update --check', { timeout: 90_000 }, () => {
  it('a newer release on the channel: update_available, exit 100; the newest: update_up_to_date, exit 0', async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start(newer);
    const found = await update(['--check', '--feed', gh.feed]);
    expect(found.report).toMatchObject({
      code: 'update_available',
      latest: '99.0.0',
      exit: 100,
      check: { channel: 'github', release: { tag: 'v99.0.0', checksums: true, asset: { name: 'swan-provider-console-99.0.0.tgz' } } },
    });
    expect(found.code).toBe(100);
    expect(gh.hits).toEqual([`/repos/${gh.owner}/${gh.repo}/releases/latest`]);

    const words = await runCli(['update', '--check', '--home', home, '--feed', gh.feed]);
    expect(words.code).toBe(100);
    expect(words.stdout).toMatch(/^code: +update_available$/m);
    expect(words.stdout).toMatch(/^latest: +99\.0\.0 /m);

    gh.release = { tag: 'v0.0.1', assets: [] };
    const newest = await update(['--check', '--feed', gh.feed]);
    expect(newest.report.code).toBe('update_up_to_date');
    expect(newest.code).toBe(0);
  });

  it("reads the feed saved in the console's settings; a channel without a release fails with its code, exit 1", async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start(undefined);
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ updateFeedUrl: gh.feed }));
    const r = await update(['--check']);
    expect(r.report).toMatchObject({ code: 'update_check_failed', check: { errorCode: 'feed_not_found' }, exit: 1 });
    expect(r.code).toBe(1);
    const bad = await runCli(['update', '--check', '--home', home, '--feed', 'ftp://example.org/x']);
    expect(bad.code).toBe(2);
  });
});

describe('swan-provider update', { timeout: 90_000 }, () => {
  it('downloads, verifies against SHA256SUMS and stages the file 0600; prints the install command, installs nothing', async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start(newer);
    const r = await update(['--feed', gh.feed]);
    expect(r.report).toMatchObject({ code: 'update_ready', exit: 0, download: { state: 'ready', sha256: sha256(tgz), bytes: tgz.length } });
    expect(r.code).toBe(0);
    const file = r.report.download!.file!;
    expect(path.dirname(file)).toBe(path.join(home, 'updates'));
    expect(fs.readFileSync(file)).toEqual(tgz);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(r.report.download!.command).toBe(`npm install -g '${file}'`);
    expect(r.report.agentRunning).toBeUndefined();
  });

  it('refuses a file that does not match SHA256SUMS: update_checksum_mismatch, exit 1, nothing kept', async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start({
      tag: 'v99.0.0',
      assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: tgz, served: Buffer.from(tgz).reverse() }],
    });
    const r = await update(['--feed', gh.feed]);
    expect(r.report).toMatchObject({ code: 'update_checksum_mismatch', exit: 1, download: { state: 'error' } });
    expect(r.code).toBe(1);
    expect(fs.readdirSync(path.join(home, 'updates'))).toEqual([]);
  });

  it('with an agent running on this home: held until it says its last request finished, then ready (exit 0)', async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start(newer);
    // This test process stands in for the agent of the home: agent.json names it, and it answers console-links/.
    fs.writeFileSync(path.join(home, 'agent.json'), JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: Date.now() }));
    let asked!: () => void;
    const wasAsked = new Promise<void>((r) => (asked = r));
    let drain!: (held: number) => void;
    stop = serveHomeQuestions(home, {
      idle: () => {
        asked();
        return new Promise<number>((r) => (drain = r));
      },
    });
    let exited = false;
    const run = update(['--feed', gh.feed]).finally(() => (exited = true));
    await wasAsked;
    expect(exited).toBe(false); // held: two requests are in flight
    drain(2);
    const r = await run;
    expect(r.report).toMatchObject({ code: 'update_ready', exit: 0, agentRunning: { pid: process.pid, heldFor: 2 } });
    expect(r.code).toBe(0);
  });

  it('with an agent whose requests are still in flight after --wait: update_held_requests_in_flight, exit 3, the verified file kept', async () => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'swan-cli-update-'));
    gh = await GithubReleasesStandIn.start(newer);
    fs.writeFileSync(path.join(home, 'agent.json'), JSON.stringify({ pid: process.pid, host: os.hostname(), startedAt: Date.now() }));
    stop = serveHomeQuestions(home, { idle: () => new Promise<number>(() => undefined) });
    const r = await update(['--feed', gh.feed, '--wait', '1']);
    expect(r.report).toMatchObject({ code: 'update_held_requests_in_flight', exit: 3, download: { state: 'held', sha256: sha256(tgz) } });
    expect(r.code).toBe(3);
    expect(fs.readFileSync(r.report.download!.file!)).toEqual(tgz);
  });
});
