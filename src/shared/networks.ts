// The Swan Inference networks an owner can pick (Settings, onboarding, `swan-provider init`): the
// addresses are the Go computing-provider's own (build/version.go for mainnet, its Makefile for
// testnet; see HUB-PROTOCOL.md "Addresses"). Anything else is a custom hub, such as the dev hub.

export type NetworkName = 'mainnet' | 'testnet' | 'custom';

export interface NetworkAddresses {
  /** WebSocketURL: where providers connect (the link dials `…/ws`). */
  hubUrl: string;
  /** ServiceURL: the hub's HTTP API (provider status, stats). */
  serviceUrl: string;
}

export const NETWORKS: Record<Exclude<NetworkName, 'custom'>, NetworkAddresses & { label: string }> = {
  mainnet: { label: 'Swan Inference mainnet', hubUrl: 'wss://inference-ws.swanchain.io', serviceUrl: 'https://api.swanchain.io' },
  testnet: { label: 'Swan Inference testnet', hubUrl: 'wss://inference-ws-dev.swanchain.io', serviceUrl: 'https://inference-dev.swanchain.io' },
};

/** The local dev hub (`swan-provider dev-hub`, port 8081): a custom hub for trying things on one machine. */
export const LOCAL_DEV_HUB: NetworkAddresses = { hubUrl: 'ws://127.0.0.1:8081', serviceUrl: 'http://127.0.0.1:8081' };

/**
 * The register ack extension of a hub whose network and money are simulated (`swan-provider dev-hub` and
 * `demo`): the console then says so on every page, and never that it serves the Swan network. The real hub
 * never sends it; a hub that did would only make the console warn.
 */
export const SIMULATED_HUB_EXTENSION = 'simulated-network';

/** Where provider keys come from: the Swan Inference dashboard (mainnet's; `dashboardUrlOf` names each network's). */
export const PROVIDER_DASHBOARD_URL = 'https://inference.swanchain.io';

/**
 * Each network's dashboard, where its provider keys are made: mainnet's is build/version.go's
 * DefaultInferenceDashboardURL; testnet's is the testnet web host of the Makefile's dev build
 * (DefaultInferenceURL https://inference-dev.swanchain.io), since a testnet key is made on testnet. A mainnet
 * link on the testnet key step sends the owner for a key the testnet hub refuses.
 */
export const NETWORK_DASHBOARDS: Record<Exclude<NetworkName, 'custom'>, string> = {
  mainnet: PROVIDER_DASHBOARD_URL,
  testnet: 'https://inference-dev.swanchain.io',
};

/** The dashboard of the network this hub address is on; undefined for a custom hub (its own operator's). */
export function dashboardUrlOf(hubUrl: string): string | undefined {
  const n = networkOf(hubUrl);
  return n === 'custom' ? undefined : NETWORK_DASHBOARDS[n];
}

function same(a: string, b: string): boolean {
  return a.trim().replace(/\/+$/, '').toLowerCase() === b.trim().replace(/\/+$/, '').toLowerCase();
}

/** Which named network these addresses are (the hub URL decides; ServiceURL may be derived), else custom. */
export function networkOf(hubUrl: string): NetworkName {
  for (const [name, n] of Object.entries(NETWORKS) as Array<[Exclude<NetworkName, 'custom'>, NetworkAddresses]>) {
    if (same(hubUrl, n.hubUrl) || same(hubUrl, `${n.hubUrl}/ws`)) return name;
  }
  return 'custom';
}

/** How the console, the verdict and `doctor` name the network of a hub address: "Swan Inference mainnet", "Swan Inference testnet", or "the custom hub at HOST". */
export function networkLabel(hubUrl: string): string {
  const n = networkOf(hubUrl);
  if (n !== 'custom') return NETWORKS[n].label;
  try {
    return `the custom hub at ${new URL(hubUrl).host}`;
  } catch {
    return 'a custom hub';
  }
}
