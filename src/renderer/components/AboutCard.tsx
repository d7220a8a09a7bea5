// Settings → About: the version and build, and updates. The check reads the release channel (GitHub
// Releases of this project, decision 0010; or the feed set here) and says what it found, each word with its
// evidence: "newest" only after a check that answered, "verified" only with the sha256 the release's
// SHA256SUMS lists. A download is the owner's press (the desktop app also downloads in the background); a
// verified file waits while any request is in flight and is ready once the last one finished. The headless
// agent never installs itself: it shows the exact command. The desktop app with a generic feed installs on
// Restart (or "install when I quit"): each is a button press, never automatic.
import { useEffect, useState } from 'react';
import type { UpdateCheckView, UpdateDownloadView } from '../../shared/views/settings';
import { getBridge } from '../bridge';
import { fmtTime } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText, TextField } from './Field';
import { BusyButton } from './BusyButton';

const mb = (bytes: number): string => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`);

function Verified({ d }: { d: UpdateDownloadView }) {
  if (!d.sha256) return null;
  return (
    <span className="small">
      {' '}
      Its sha256{' '}
      <code className="mono" data-testid="update-sha256" title={d.sha256}>
        {d.sha256.slice(0, 16)}…
      </code>{' '}
      matches the release&apos;s SHA256SUMS
      {d.file ? (
        <>
          {' '}
          (
          <code className="mono" data-testid="update-file">
            {d.file}
          </code>
          )
        </>
      ) : null}
      .{' '}
      <span data-testid="update-signature" data-signature={d.signature ?? 'not_checked'}>
        {d.signature === 'verified'
          ? `The checksum list is signed by release key ${d.signedBy ?? ''}.`
          : 'Its signature was not checked: no release key is set on this machine.'}
      </span>
    </span>
  );
}

function DownloadSteps({ d, mode }: { d: UpdateDownloadView; mode: 'desktop' | 'headless' | undefined }) {
  const [download, downloadState] = useCall(() => getBridge().invoke('update.download', {}));
  const [install, installState] = useCall((when: 'now' | 'on-quit') => getBridge().invoke('update.install', { when }));
  const error = downloadState.error ?? installState.error ?? d.error;
  // A file checked against SHA256SUMS (the release channel) is the agent's; the generic feed's is electron-updater's.
  const agents = d.code !== undefined;
  return (
    <div data-testid="update-download" data-state={d.state} data-code={d.code ?? ''}>
      {d.state === 'downloading' && (
        <p className="muted small" role="status">
          Downloading version {d.version}… {d.percent ?? 0} %
        </p>
      )}
      {d.state === 'downloaded' && !agents && (
        <p className="small" role="status">
          Version {d.version} is downloaded.{' '}
          {d.installOnQuit ? 'It will be installed when you quit the app.' : 'Restart to install it now, or have it installed when you quit.'}
        </p>
      )}
      {d.state === 'downloaded' && agents && (
        <p className="small" role="status">
          Version {d.version} is downloaded.
          <Verified d={d} />
        </p>
      )}
      {d.state === 'held' && (
        <p className="banner banner-info small" role="status" data-testid="update-held">
          Version {d.version} is downloaded and waits: {d.inFlight ?? 'some'} request{d.inFlight === 1 ? ' is' : 's are'} in flight. It is ready once the last
          one has finished; nothing restarts in the middle of a request.
          <Verified d={d} />
        </p>
      )}
      {d.state === 'ready' && (
        <div className="banner banner-info small" role="status" data-testid="update-ready">
          <p>
            Version {d.version} is ready: no request is in flight.
            <Verified d={d} />
          </p>
          {d.command ? (
            <p>
              Nothing was installed. To install it, run{' '}
              <code className="mono" data-testid="update-command">
                {d.command}
              </code>{' '}
              in a terminal on this machine, then restart the agent.
            </p>
          ) : mode === 'desktop' ? (
            <p>Nothing was installed: the app does not install this file itself yet. Quit the app, then install the file above as you installed the app.</p>
          ) : null}
        </div>
      )}
      <div className="form-actions">
        {(d.state === 'available' || d.state === 'error') && (
          <button type="button" onClick={() => void download()} disabled={downloadState.pending} data-testid="update-download-start">
            Download version {d.version}
          </button>
        )}
        {d.state === 'downloaded' && !agents && (
          <>
            <button type="button" className="primary" onClick={() => void install('now')} disabled={installState.pending} data-testid="update-install-now">
              Restart and install
            </button>
            {!d.installOnQuit && (
              <button type="button" onClick={() => void install('on-quit')} disabled={installState.pending} data-testid="update-install-on-quit">
                Install when I quit
              </button>
            )}
          </>
        )}
      </div>
      <ErrorText error={error} testId="update-download-error" />
    </div>
  );
}

function UpdateResult({ r, mode }: { r: UpdateCheckView; mode: 'desktop' | 'headless' | undefined }) {
  const pushed = useStore((s) => s.updateDownload);
  const d = r.download && pushed?.version === r.download.version ? pushed : r.download;
  if (r.error)
    return (
      <div data-testid="update-result" data-available="unknown" data-code={r.errorCode ?? r.code ?? ''}>
        <ErrorText error={r.error} testId="update-result-error" />
      </div>
    );
  if (!r.available)
    return (
      <p className="muted small" role="status" data-testid="update-result" data-available="no" data-code={r.code ?? ''}>
        You have the newest version: {r.current}
        {r.latest && r.latest !== r.current ? ` (the feed's newest is ${r.latest})` : ''}; checked {fmtTime(r.checkedAt)}.
      </p>
    );
  const rel = r.release;
  const advice = d
    ? rel
      ? ''
      : 'Nothing is downloaded until you press Download.'
    : rel
      ? rel.asset
        ? rel.checksums
          ? ''
          : 'The release lists no SHA256SUMS, so its files cannot be verified: nothing is downloaded.'
        : 'The release has no file for this system; download it from the release page.'
      : mode === 'desktop'
        ? 'Download it from where you got the app when you are ready; nothing is downloaded for you.'
        : `This feed names a version but carries no checksums: install it as you installed this one (e.g. npm install -g swan-provider-console@${r.latest}), then restart the agent.`;
  return (
    <>
      <p className="banner banner-info" role="status" data-testid="update-result" data-available="yes" data-code={r.code ?? ''}>
        Version <strong data-testid="update-latest">{r.latest}</strong> is available (you have {r.current}).
        {rel?.asset ? (
          <>
            {' '}
            Release {rel.tag}: <span className="mono">{rel.asset.name}</span> ({mb(rel.asset.size)}){rel.checksums ? ', listed in its SHA256SUMS.' : '.'}
          </>
        ) : null}{' '}
        {advice}
      </p>
      {d && <DownloadSteps d={d} mode={mode} />}
    </>
  );
}

export function AboutCard() {
  const settings = useStore((s) => s.settings);
  const info = useFetch(() => getBridge().invoke('app.info', {}), []);
  const [feed, setFeed] = useState<string | null>(null);
  const [feedError, setFeedError] = useState<string | undefined>();
  const [result, setResult] = useState<UpdateCheckView | null>(null);
  // A check already made (the hub's upgrade advice starts one) is shown without asking the channel again,
  // and read again when the agent says a newer version was found meanwhile (its pushed state has a code).
  const pushed = useStore((s) => s.updateDownload);
  const foundVersion = pushed?.code === 'update_available' ? pushed.version : undefined;
  useEffect(() => {
    let live = true;
    getBridge()
      .invoke('update.status', {})
      .then((r) => live && r && setResult((cur) => (cur && !foundVersion ? cur : r)))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [foundVersion]);
  const [check, checkState] = useCall(async () => {
    if (feed !== null && settings && feed.trim() !== settings.updateFeedUrl) {
      const r = await getBridge().invoke('settings.save', { patch: { updateFeedUrl: feed.trim() } });
      if (!r.ok) {
        setFeedError(r.errors.updateFeedUrl ?? Object.values(r.errors).join(' '));
        return;
      }
      setSettings(await getBridge().invoke('settings.get', {}));
      setFeed(null);
    }
    setFeedError(undefined);
    setResult(await getBridge().invoke('update.check', {}));
  });
  return (
    <Card title="About and updates" testId="about-card">
      <dl className="facts">
        <dt>Version</dt>
        <dd className="mono" data-testid="app-version">
          {info.data?.version ?? '…'}
        </dd>
        <dt>Build</dt>
        <dd className="mono" data-testid="app-build">
          {info.data ? `${info.data.build} (${info.data.mode === 'desktop' ? 'desktop app' : 'headless agent'})` : '…'}
        </dd>
      </dl>
      <TextField
        label="Update feed"
        hint="Empty: this project's GitHub Releases, each file checked against the release's SHA256SUMS. Or another GitHub API repository URL (…/repos/OWNER/REPO); npm metadata or a folder with latest.yml name a version only."
        error={feedError}
        testId="field-updateFeedUrl"
        value={feed ?? settings?.updateFeedUrl ?? ''}
        placeholder="https://api.github.com/repos/swanchain/swan-provider-console"
        onChange={setFeed}
        inputTestId="input-updateFeedUrl"
      />
      <div className="form-actions">
        <BusyButton onClick={() => void check()} disabled={!settings} data-testid="update-check" busy={checkState.pending} busyLabel="Checking…">
          Check for updates
        </BusyButton>
      </div>
      <ErrorText error={checkState.error ?? info.error} />
      {result && <UpdateResult r={result} mode={info.data?.mode} />}
    </Card>
  );
}
