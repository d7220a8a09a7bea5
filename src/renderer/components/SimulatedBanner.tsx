// On every page while the agent serves a hub that says its network is simulated (the dev hub, `demo`):
// what is shown here is a stand-in of the network, and its earnings are not money.
import { useStore } from '../store/store';

export function SimulatedBanner() {
  const simulated = useStore((s) => s.snapshot?.simulatedHub === true);
  if (!simulated) return null;
  return (
    <div className="banner banner-info simulated-banner" role="status" data-testid="simulated-banner">
      <strong>Simulated network, simulated money.</strong> This agent serves a development hub (<code>swan-provider dev-hub</code> or <code>demo</code>): its
      requests, catalogue and earnings stand in for Swan Inference and pay nothing. To serve the real network, choose mainnet in Settings.
    </div>
  );
}
