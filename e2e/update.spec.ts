// Updates that never cost a paid request, in Chromium against the real agent (issue 44, item 4): the release
// channel is a stand-in of GitHub's REST API on 127.0.0.1 (test/support/github-releases.ts). The owner points
// Settings → About at it, the check finds a newer release, the download is verified against the release's
// SHA256SUMS, and, with a hub request streaming, the verified file is held until that request finished; then
// it is ready, with the command that installs it (nothing is installed for the owner). And the hub's
// upgrade_available (the dev hub's POST /dev/upgrade) makes the agent check the channel; the Dashboard's
// advice leads to Settings → About, which shows what that check found.
import { GithubReleasesStandIn, sha256 } from '../test/support/github-releases';
import { expect, go, slug, test } from './support/fixtures';

const tgz = Buffer.from('the npm tarball of swan-provider-console 99.0.0 '.repeat(64));

test.use({ stackOptions: { withKey: true, gpu: true, tokensPerSecond: 10 } });

test('an update found, downloaded and verified, held until the last request finished, then ready', async ({ app, stack }) => {
  // The request below streams for about 30 s: room for the steps between it and the download on a loaded machine.
  test.setTimeout(150_000);
  const gh = await GithubReleasesStandIn.start({ tag: 'v99.0.0', assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: tgz }] });
  try {
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    const model = stack.engine.models[0]!;
    await go(app, 'settings');
    const card = app.getByTestId('about-card');
    await card.getByTestId('input-updateFeedUrl').fill(gh.feed);
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-code', 'update_available');
    await expect(card.getByTestId('update-latest')).toHaveText('99.0.0');

    // A paid request streaming through the hub: 300 tokens at 10 a second.
    const request = stack.chat(model, 300);
    await go(app, 'engines');
    await expect(app.getByTestId(`model-inflight-${slug(model)}`)).toHaveText(/^1 \//);
    // Back on Settings, the card shows the agent's last check again (update.status), with its Download.
    await go(app, 'settings');
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-code', 'update_available');
    const steps = card.getByTestId('update-download');
    await expect(steps).toHaveAttribute('data-state', 'available');

    await card.getByTestId('update-download-start').click();
    await expect(steps).toHaveAttribute('data-code', 'update_held_requests_in_flight');
    await expect(card.getByTestId('update-held')).toBeVisible();
    await expect(card.getByTestId('update-sha256')).toHaveAttribute('title', sha256(tgz));
    // No release key is set here: the signature is said not to have been checked, never called signed.
    await expect(card.getByTestId('update-signature')).toHaveAttribute('data-signature', 'not_checked');
    await expect(card.getByTestId('update-command')).toHaveCount(0);

    // The request finishes; only then is the file ready.
    expect((await request).length).toBeGreaterThan(0);
    await expect(steps).toHaveAttribute('data-code', 'update_ready');
    await expect(card.getByTestId('update-command')).toContainText("npm install -g '");
    await expect(card.getByTestId('update-command')).toContainText('swan-provider-console-99.0.0.tgz');
    expect(gh.hits).toContain('/storage/SHA256SUMS');

    // A check that fails is never "newest": the channel gone, the result says it could not check.
    await gh.close();
    await card.getByTestId('update-check').click();
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-available', 'unknown');
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-code', 'feed_unreachable');
  } finally {
    await gh.close();
  }
});

test("the hub's upgrade advice leads to the update: a failed check is never 'newest'; the advice checks again", async ({ app, stack }) => {
  const gh = await GithubReleasesStandIn.start(undefined);
  try {
    await expect(app.getByTestId('link-state')).toHaveText('Connected');
    await go(app, 'settings');
    const card = app.getByTestId('about-card');
    await card.getByTestId('input-updateFeedUrl').fill(gh.feed);
    await card.getByTestId('update-check').click();
    // The repository has no release yet: said as a failed check, not as "you have the newest version".
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-code', 'feed_not_found');
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-available', 'unknown');

    gh.release = { tag: 'v99.0.0', assets: [{ name: 'swan-provider-console-99.0.0.tgz', data: tgz }] };
    const hits = gh.hits.length;
    const res = await fetch(`${stack.hubUrl}/dev/upgrade`, {
      method: 'POST',
      body: JSON.stringify({ running: '0.5.0', latest: '0.6.0', message: 'Provider 0.6.0 is out.' }),
    });
    expect(res.status).toBe(200);
    await go(app, 'dashboard');
    await expect(app.getByTestId('hub-upgrade')).toContainText('0.6.0');
    await expect.poll(() => gh.hits.length).toBeGreaterThan(hits);
    await app.getByTestId('hub-upgrade-open').click();
    await expect(app.getByTestId('page-settings')).toBeVisible();
    await expect(card.getByTestId('update-result')).toHaveAttribute('data-code', 'update_available');
    await expect(card.getByTestId('update-latest')).toHaveText('99.0.0');
    await expect(card.getByTestId('update-download')).toHaveAttribute('data-state', 'available');
  } finally {
    await gh.close();
  }
});
