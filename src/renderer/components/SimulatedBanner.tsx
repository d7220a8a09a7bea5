// On every page while the agent serves a hub that says its network is simulated (the dev hub, `demo`):
// what is shown here is a stand-in of the network, and its earnings are not money.
import { useStore } from '../store/store';

export function SimulatedBanner() {
  const simulated = useStore((s) => s.snapshot?.simulatedHub === true);
  if (!simulated) return null;
  return (
    <div className="banner banner-info simulated-banner" role="status" data-testid="simulated-banner">
      <strong>Simulated network, simulated money.</strong> This agent serves a development hub (<code>dev-hub</code> or <code>demo</code>): its requests and
      earnings are not Swan Inference&apos;s and pay nothing. Choose mainnet in Settings to serve the real network.
    </div>
  );
}
