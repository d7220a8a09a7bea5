// How the console names where it serves (onboarding, Settings, the Dashboard): the one rule in
// src/shared/networks.ts, and the network's own registration step as the network's.
import type { NetworkAddresses } from '../../shared/networks';
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

/**
 * A custom hub as typed: HOST:PORT means ws:// (and http:// for its API), as `swan-provider dev-hub` prints
 * it; an empty API address is the hub's own (the dev hub serves both on one port).
 */
export function customAddresses(hub: string, service: string): NetworkAddresses {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i;
  const h = hub.trim();
  const hubUrl = !h || scheme.test(h) ? h : `ws://${h}`;
  const s = service.trim();
  const serviceUrl = s ? (scheme.test(s) ? s : `http://${s}`) : hubUrl.replace(/^ws(s?):\/\//i, 'http$1://').replace(/\/ws\/?$/, '');
  return { hubUrl, serviceUrl };
}
