// Asked when a Settings save would send the provider key somewhere new (another hub or service host)
// or over plain ws:// / http:// to another machine: names each host, says what "insecure" means, and
// saves only when the owner agrees (the agent checks the same confirmation, see key-destination.ts).
import type { SaveResult, SettingsPatch } from '../../shared/bridge';
import { getBridge } from '../bridge';
import { ErrorText } from './Field';
import { useCall } from '../lib/use-call';

export interface PendingDestination {
  patch: SettingsPatch;
  confirm: { keyDestination: string[]; insecure: string[] };
}

export function KeyDestinationConfirm({ pending, onResult, onCancel }: { pending: PendingDestination; onResult: (r: SaveResult) => void; onCancel: () => void }) {
  const { keyDestination, insecure } = pending.confirm;
  const [agree, state] = useCall(async () => {
    const patch: SettingsPatch = { ...pending.patch };
    if (keyDestination.length) patch.confirmKeyDestination = keyDestination;
    if (insecure.length) patch.confirmInsecure = true;
    onResult(await getBridge().invoke('settings.save', { patch }));
  });
  const hosts = [...new Set([...keyDestination, ...insecure])];
  return (
    <div className="banner banner-warn" role="alertdialog" aria-labelledby="key-destination-title" data-testid="key-destination-confirm">
      <p id="key-destination-title">
        <strong>Your provider key will be sent to {hosts.map((h) => <code key={h}>{h}</code>)}.</strong>{' '}
        {keyDestination.length > 0 && 'That server has not received it before. Only continue if you trust it: whoever runs it can use your key.'}
      </p>
      {insecure.length > 0 && (
        <p data-testid="key-destination-insecure">
          <strong>Insecure:</strong> the connection to {insecure.join(', ')} is plain <code>ws://</code>/<code>http://</code>, not encrypted. Anyone on the network path can read
          the key and the traffic. Prefer <code>wss://</code>/<code>https://</code>.
        </p>
      )}
      <div className="form-actions">
        <button type="button" className="primary" disabled={state.pending} onClick={() => void agree()} data-testid="key-destination-agree">
          {insecure.length > 0 ? 'Send my key anyway (insecure)' : `Send my key to ${hosts.join(', ')}`}
        </button>
        <button type="button" onClick={onCancel} data-testid="key-destination-cancel">
          Cancel
        </button>
      </div>
      <ErrorText error={state.error} />
    </div>
  );
}
