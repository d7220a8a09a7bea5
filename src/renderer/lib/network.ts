// How the console names where it serves (onboarding, Settings, the Dashboard): the one rule in
// src/shared/networks.ts, and the network's own registration step as the network's.
export { networkLabel } from '../../shared/networks';

/**
 * Where the provider is in the network's own registration, from its provider status: "Registration on the
 * network: Request approval (1 of 4)". Said as the network's, so it never reads as a step of this setup.
 */
export function registrationStep(d: { step?: number; totalSteps?: number; stepLabel?: string }): string | null {
  if (d.step === undefined || !d.totalSteps) return null;
  const count = `${d.step} of ${d.totalSteps}`;
  return `Registration on the network: ${d.stepLabel ? `${d.stepLabel} (${count})` : `step ${count}`}`;
}
