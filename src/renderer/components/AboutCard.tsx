// Settings → About: the version and build, and the update check. The check only reads a feed (npm's
// metadata for this package by default, or the feed set here) and says what it found; nothing is
// downloaded or installed without the owner doing it.
import { useState } from 'react';
import type { UpdateCheckView } from '../../shared/bridge';
import { getBridge } from '../bridge';
import { fmtTime } from '../lib/format';
import { useCall, useFetch } from '../lib/use-call';
import { setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText, Field } from './Field';

function UpdateResult({ r, mode }: { r: UpdateCheckView; mode: 'desktop' | 'headless' | undefined }) {
  if (r.error) return <ErrorText error={r.error} testId="update-result-error" />;
  if (!r.available)
    return (
      <p className="muted small" role="status" data-testid="update-result" data-available="no">
        You have the newest version ({r.current}; checked {fmtTime(r.checkedAt)}).
      </p>
    );
  return (
    <p className="banner banner-info" role="status" data-testid="update-result" data-available="yes">
      Version <strong data-testid="update-latest">{r.latest}</strong> is available (you have {r.current}).{' '}
      {mode === 'desktop'
        ? 'Download it from where you got the app when you are ready; nothing is downloaded for you.'
        : `When you are ready: npm install -g swan-provider-console@${r.latest}, then restart the agent. Nothing is downloaded for you.`}
    </p>
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
      <Field label="Update feed" hint="Empty: the npm registry's record of swan-provider-console. A desktop build may use a folder with latest.yml." error={feedError} testId="field-updateFeedUrl">
        {(id, d) => (
          <input
            id={id}
            aria-describedby={d}
            value={feed ?? settings?.updateFeedUrl ?? ''}
            placeholder="https://registry.npmjs.org/swan-provider-console"
            onChange={(e) => setFeed(e.target.value)}
            data-testid="input-updateFeedUrl"
          />
        )}
      </Field>
      <div className="form-actions">
        <button type="button" onClick={() => void check()} disabled={checkState.pending || !settings} data-testid="update-check">
          {checkState.pending ? 'Checking…' : 'Check for updates'}
        </button>
      </div>
      <ErrorText error={checkState.error ?? info.error} />
      {result && <UpdateResult r={result} mode={info.data?.mode} />}
    </Card>
  );
}
