// Settings: which named network the hub addresses below are (mainnet, testnet, or a custom hub), and a
// one-click way to fill them with a named network's addresses (saved with the rest of the form).
import { NETWORKS, networkOf, type NetworkAddresses } from '../../shared/networks';

export function NetworkChoice({ hubUrl, onPick }: { hubUrl: string; onPick: (addresses: NetworkAddresses) => void }) {
  const current = networkOf(hubUrl);
  return (
    <div className="field" data-testid="network-choice" data-network={current}>
      <span className="small">
        Network: <strong data-testid="network-name">{current === 'custom' ? 'custom hub' : NETWORKS[current].label}</strong>
      </span>{' '}
      {(['mainnet', 'testnet'] as const)
        .filter((n) => n !== current)
        .map((n) => (
          <button
            key={n}
            type="button"
            className="small-button"
            onClick={() => onPick({ hubUrl: NETWORKS[n].hubUrl, serviceUrl: NETWORKS[n].serviceUrl })}
            data-testid={`use-${n}`}
          >
            Use {n}
          </button>
        ))}
    </div>
  );
}
