// First run, in four steps on one page: 1 network, 2 provider key (with the hub's status of it),
// 3 engines and the models to serve, 4 done. Settings stay one click away at every step.
import { useState } from 'react';
import { getBridge } from '../bridge';
import { Card } from '../components/Card';
import { ErrorText } from '../components/Field';
import { KeyStep } from '../components/onboarding/KeyStep';
import { NetworkStep } from '../components/onboarding/NetworkStep';
import { ServeStep } from '../components/onboarding/ServeStep';
import { servedModels } from '../lib/serving-state';
import { useCall } from '../lib/use-call';
import { finishOnboarding } from '../store/actions';
import { useStore } from '../store/store';
import { Settings } from './Settings';

function DoneStep({ networkDone }: { networkDone: boolean }) {
  const snapshot = useStore((s) => s.snapshot);
  const [finish, finishState] = useCall(async () => {
    finishOnboarding(await getBridge().invoke('onboarding.complete', {}));
  });
  if (!snapshot) return null;
  const served = servedModels(snapshot);
  return (
    <Card title="4. Done" testId="onboarding-done">
      <ul className="plain-list small">
        <li>{networkDone ? '✓' : '•'} Network: <span className="mono">{snapshot.link.hubUrl}</span></li>
        <li>{snapshot.hasKey ? '✓ Provider key saved' : '✗ No provider key yet'}</li>
        <li data-testid="onboarding-summary-models">
          {served.length > 0 ? `✓ ${served.length} model(s) to serve: ${served.join(', ')}` : '⚠ Nothing to serve yet: the hub connects, but sends no requests until a model is served.'}
        </li>
      </ul>
      <div className="form-actions">
        <button type="button" className="primary big" disabled={!snapshot.hasKey || finishState.pending} onClick={() => void finish()} data-testid="onboarding-go">
          {finishState.pending ? 'Starting…' : 'Start serving'}
        </button>
        {!snapshot.hasKey && <span className="muted">Save a valid key first.</span>}
        <ErrorText error={finishState.error} />
      </div>
    </Card>
  );
}

export function Onboarding() {
  const snapshot = useStore((s) => s.snapshot);
  const [showSettings, setShowSettings] = useState(false);
  const [networkDone, setNetworkDone] = useState(false);
  if (!snapshot) return null;
  if (showSettings) {
    return (
      <div className="page onboarding" data-testid="page-onboarding-settings">
        <div className="form-actions">
          <button type="button" onClick={() => setShowSettings(false)} data-testid="onboarding-back">
            ← Back to setup
          </button>
        </div>
        <Settings />
      </div>
    );
  }
  return (
    <div className="page onboarding" data-testid="page-onboarding">
      <div className="page-head">
        <h1>Welcome to Swan Provider</h1>
        <button type="button" onClick={() => setShowSettings(true)} data-testid="onboarding-settings">
          Settings
        </button>
      </div>
      <p className="lead">Your GPU can serve AI models to the Swan Inference network and earn for each request. Four short steps.</p>
      <NetworkStep done={networkDone} onDone={() => setNetworkDone(true)} />
      <KeyStep />
      <ServeStep />
      <DoneStep networkDone={networkDone} />
    </div>
  );
}
