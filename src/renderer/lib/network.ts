// How the console names the network a hub address belongs to (onboarding, Settings, the Dashboard).
import { NETWORKS, networkOf } from '../../shared/networks';

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** "Swan Inference mainnet", "Swan Inference testnet", or "the custom hub at HOST". */
export function networkLabel(hubUrl: string): string {
  const n = networkOf(hubUrl);
  return n === 'custom' ? `the custom hub at ${hostOf(hubUrl)}` : NETWORKS[n].label;
}

/**
 * Where the provider is in the network's own registration, from its provider status: "Registration on the
 * network: Request approval (1 of 4)". Said as the network's, so it never reads as a step of this setup.
 */
export function registrationStep(d: { step?: number; totalSteps?: number; stepLabel?: string }): string | null {
  if (d.step === undefined || !d.totalSteps) return null;
  const count = `${d.step} of ${d.totalSteps}`;
  return `Registration on the network: ${d.stepLabel ? `${d.stepLabel} (${count})` : `step ${count}`}`;
}
