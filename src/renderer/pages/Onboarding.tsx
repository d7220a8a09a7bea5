// First run, one step at a time: 1 network, 2 provider key (checked with that network), 3 engines and the
// models to serve, 4 start. The steps reached stay one click away in the step bar; Settings too. Which
// step the owner is at survives a reload of the page (sessionStorage), not a new session.
import { useEffect, useState } from 'react';
import { getBridge } from '../bridge';
import { Card } from '../components/Card';
import { ErrorText } from '../components/Field';
import { KeyStep } from '../components/onboarding/KeyStep';
import { NetworkStep } from '../components/onboarding/NetworkStep';
import { ServeStep } from '../components/onboarding/ServeStep';
import { networkLabel } from '../lib/network';
import { servedModels } from '../lib/serving-state';
import { useCall } from '../lib/use-call';
import { finishOnboarding } from '../store/actions';
import { useStore } from '../store/store';
import { Settings } from './Settings';
import { StepActions } from '../components/onboarding/StepActions';
import { BusyButton } from '../components/BusyButton';

const STEPS = ['Network', 'Provider key', 'Engines & models', 'Start'] as const;
type Step = 1 | 2 | 3 | 4;
const STORE_KEY = 'swan.onboarding';

function loadProgress(): { step: Step; furthest: Step } {
  try {
    const p = JSON.parse(sessionStorage.getItem(STORE_KEY) ?? '') as { step?: unknown; furthest?: unknown };
    const ok = (v: unknown): v is Step => v === 1 || v === 2 || v === 3 || v === 4;
    if (ok(p.step) && ok(p.furthest) && p.step <= p.furthest) return { step: p.step, furthest: p.furthest };
  } catch {
    // nothing stored yet
  }
  return { step: 1, furthest: 1 };
}

function StepBar({ step, furthest, onGo }: { step: Step; furthest: Step; onGo: (s: Step) => void }) {
  return (
    <nav aria-label="Setup steps">
      <ol className="stepper" data-testid="onboarding-steps" data-step={step}>
        {STEPS.map((label, i) => {
          const n = (i + 1) as Step;
          const state = n === step ? 'current' : n < step || n <= furthest ? 'reached' : 'ahead';
          return (
            <li key={label} className={`stepper-item is-${state}`}>
              <button
                type="button"
                className="stepper-button"
                disabled={n > furthest}
                aria-current={n === step ? 'step' : undefined}
                onClick={() => onGo(n)}
                data-testid={`onboarding-step-${n}`}
              >
                <span className="stepper-num" aria-hidden="true">
                  {n < step ? '✓' : n}
                </span>
                <span className="stepper-label">
                  <span className="sr-only">Step {n} of 4: </span>
                  {label}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </nav>
  );
}

function DoneStep({ onBack }: { onBack: () => void }) {
  const snapshot = useStore((s) => s.snapshot);
  const settings = useStore((s) => s.settings);
  const [finish, finishState] = useCall(async () => {
    const done = await getBridge().invoke('onboarding.complete', {});
    sessionStorage.removeItem(STORE_KEY);
    finishOnboarding(done);
  });
  if (!snapshot) return null;
  const served = servedModels(snapshot);
  return (
    <Card title="Ready to start" testId="onboarding-done" className="onboarding-step">
      <ul className="plain-list summary-list">
        <li data-testid="onboarding-summary-network">
          ✓ Network: {settings ? networkLabel(settings.hubUrl) : ''} <span className="mono small muted break">{settings?.hubUrl}</span>
        </li>
        <li>{snapshot.hasKey ? '✓ Provider key saved' : '✗ No provider key yet'}</li>
        <li data-testid="onboarding-summary-models">
          {served.length > 0
            ? `✓ ${served.length} model(s) to serve: ${served.join(', ')}`
            : '⚠ Nothing to serve yet: the hub connects, but sends no requests until a model is served.'}
        </li>
      </ul>
      <StepActions onBack={onBack} backTestId="done-back">
        <BusyButton
          className="primary big"
          disabled={!snapshot.hasKey}
          onClick={() => void finish()}
          data-testid="onboarding-go"
          busy={finishState.pending}
          busyLabel="Starting…"
        >
          Start serving
        </BusyButton>
        {!snapshot.hasKey && <span className="muted">Save a valid key first.</span>}
      </StepActions>
      <ErrorText error={finishState.error} />
    </Card>
  );
}

export function Onboarding() {
  const snapshot = useStore((s) => s.snapshot);
  const [showSettings, setShowSettings] = useState(false);
  const [{ step, furthest }, setProgress] = useState(loadProgress);
  useEffect(() => {
    sessionStorage.setItem(STORE_KEY, JSON.stringify({ step, furthest }));
  }, [step, furthest]);
  // A new step starts at its top (the page scrolls in <main>).
  useEffect(() => {
    document.getElementById('main')?.scrollTo(0, 0);
  }, [step]);
  if (!snapshot) return null;
  const goTo = (s: Step) => setProgress((p) => ({ step: s, furthest: Math.max(p.furthest, s) as Step }));
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
      <p className="lead">Your GPU can serve AI models to a Swan Inference network and earn for each request. Four short steps.</p>
      <StepBar step={step} furthest={furthest} onGo={goTo} />
      {step === 1 && <NetworkStep onNext={() => goTo(2)} />}
      {step === 2 && <KeyStep onBack={() => goTo(1)} onNext={() => goTo(3)} />}
      {step === 3 && <ServeStep onBack={() => goTo(2)} onNext={() => goTo(4)} />}
      {step === 4 && <DoneStep onBack={() => goTo(3)} />}
    </div>
  );
}
