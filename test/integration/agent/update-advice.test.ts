// The hub's `upgrade_available` leads to the release channel: a register ack advising an upgrade makes the
// agent check the channel (a stand-in of GitHub's REST API on 127.0.0.1), and the console's `update.status`
// and the log say what it found, with the command to run on a headless agent.
import { afterEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src/shared/types';
import type { UpdateDownloadView } from '../../../src/shared/views/settings';
import { startGoHub, type GoHub } from '../../support/conformance/go-hub';
import { GithubReleasesStandIn } from '../../support/github-releases';
import { startStack, TEST_KEY, type Stack } from '../../support/stack';

let hub: GoHub | undefined;
let gh: GithubReleasesStandIn | undefined;
let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  await hub?.close();
  await gh?.close();
  stack = hub = gh = undefined;
});

describe("the hub's upgrade advice", () => {
  it('starts a check of the release channel; update.status and the log carry update_available', async () => {
    gh = await GithubReleasesStandIn.start({ tag: 'v99.0.0', assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: Buffer.from('tgz') }] });
    hub = await startGoHub({ token: TEST_KEY, registerAck: () => ({ upgrade_available: { running: '0.5.0', latest: '0.6.0', message: 'upgrade' } }) });
    stack = await startStack({ hub: false, hubUrl: hub.wsUrl, start: false });
    expect(await stack.agent.invoke('settings.save', { patch: { updateFeedUrl: gh.feed } })).toEqual({ ok: true });
    const found = new Promise<UpdateDownloadView>((resolve) => stack!.agent.subscribe((e) => e.type === 'update.download' && resolve(e.download)));
    const said = new Promise<LogEntry>((resolve) =>
      stack!.log.on('entry', (e: LogEntry) => e.subsystem.endsWith('update') && e.msg.includes('hub advises') && resolve(e)),
    );
    await stack.agent.start();
    expect(await found).toMatchObject({ state: 'available', code: 'update_available', version: '99.0.0' });
    expect(gh.hits).toEqual([`/repos/${gh.owner}/${gh.repo}/releases/latest`]);
    expect(await stack.agent.invoke('update.status', {})).toMatchObject({ code: 'update_available', latest: '99.0.0' });
    const line = await said;
    expect(line.level).toBe('warn');
    expect(line.msg).toContain('`swan-provider update`');
  });
});
