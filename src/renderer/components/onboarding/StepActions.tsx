// The row of buttons under an onboarding step: Back, where there is a step before, then the step's own.
import type { ReactNode } from 'react';

export function StepActions({ onBack, backTestId, children }: { onBack?: () => void; backTestId?: string; children: ReactNode }) {
  return (
    <div className="step-actions">
      {onBack && (
        <button type="button" onClick={onBack} data-testid={backTestId}>
          Back
        </button>
      )}
      {children}
    </div>
  );
}
