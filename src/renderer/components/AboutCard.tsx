// Settings → About: the version and build, and the update check. The check only reads a feed (npm's
// metadata for this package by default, or the feed set here) and says what it found; nothing is
// downloaded or installed without the owner doing it. The desktop app with a generic feed offers
// Download, then Restart (or "install when I quit"): each is a button press, never automatic.
import { useState } from 'react';
import type { UpdateCheckView, UpdateDownloadView } from '../../shared/views/settings';
import { getBridge } from '../bridge';
import { fmtTime } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText, TextField } from './Field';
import { BusyButton } from './BusyButton';

function DownloadSteps({ d }: { d: UpdateDownloadView }) {
  const [download, downloadState] = useCall(() => getBridge().invoke('update.download', {}));
  const [install, installState] = useCall((when: 'now' | 'on-quit') => getBridge().invoke('update.install', { when }));
  const error = downloadState.error ?? installState.error ?? d.error;
  return (
    <div data-testid="update-download" data-state={d.state}>
      {d.state === 'downloading' && (
        <p className="muted small" role="status">
          Downloading version {d.version}… {d.percent ?? 0} %
        </p>
      )}
      {d.state === 'downloaded' && (
        <p className="small" role="status">
          Version {d.version} is downloaded.{' '}
          {d.installOnQuit ? 'It will be installed when you quit the app.' : 'Restart to install it now, or have it installed when you quit.'}
        </p>
      )}
      <div className="form-actions">
        {(d.state === 'available' || d.state === 'error') && (
          <button type="button" onClick={() => void download()} disabled={downloadState.pending} data-testid="update-download-start">
            Download version {d.version}
          </button>
        )}
        {d.state === 'downloaded' && (
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
  if (r.error) return <ErrorText error={r.error} testId="update-result-error" />;
  if (!r.available)
    return (
      <p className="muted small" role="status" data-testid="update-result" data-available="no">
        You have the newest version ({r.current}; checked {fmtTime(r.checkedAt)}).
      </p>
    );
  const advice = d
    ? 'Nothing is downloaded until you press Download.'
    : mode === 'desktop'
      ? 'Download it from where you got the app when you are ready; nothing is downloaded for you.'
      : `When you are ready: npm install -g swan-provider-console@${r.latest}, then restart the agent. Nothing is downloaded for you.`;
  return (
    <>
      <p className="banner banner-info" role="status" data-testid="update-result" data-available="yes">
        Version <strong data-testid="update-latest">{r.latest}</strong> is available (you have {r.current}). {advice}
      </p>
      {d && <DownloadSteps d={d} />}
    </>
  );
}

export function AboutCard() {
  const settings = useStore((s) => s.settings);
  const info = useFetch(() => getBridge().invoke('app.info', {}), []);
  const [feed, setFeed] = useState<string | null>(null);
  const [feedError, setFeedError] = useState<string | undefined>();
  const [result, setResult] = useState<UpdateCheckView | null>(null);
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
      <TextField label="Update feed" hint="Empty: the npm registry's record of swan-provider-console. A desktop build may use a folder with latest.yml." error={feedError} testId="field-updateFeedUrl" value={feed ?? settings?.updateFeedUrl ?? ''} placeholder="https://registry.npmjs.org/swan-provider-console" onChange={setFeed} inputTestId="input-updateFeedUrl" />
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
