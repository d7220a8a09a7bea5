// The driver's power limit of each NVIDIA GPU, set from here with the owner's explicit consent: it acts on the
// machine beyond this app (every program on that GPU), lasts until the next reboot, and usually needs
// administrator rights; when it cannot be set the owner reads why and the command to run instead.
import { useState } from 'react';
import type { GpuPowerLimitView } from '../../shared/types';
import { getBridge } from '../bridge';
import { useFetch } from '../lib/use-call';
import { BusyButton } from './BusyButton';

function Row({ g, onSet }: { g: GpuPowerLimitView; onSet: (g: GpuPowerLimitView) => void }) {
  const [value, setValue] = useState<string>(String(Math.round(g.limitW ?? g.defaultW ?? 0)));
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<{ code: string; text: string } | null>(null);
  const changeable = g.minW !== null && g.maxW !== null;
  const set = async (): Promise<void> => {
    setBusy(true);
    setOutcome(null);
    try {
      const after = await getBridge().invoke('gpu.setPowerLimit', { index: g.index, watts: Number(value), consent: true });
      setOutcome({ code: 'gpu_power_limit_set', text: `Set: GPU ${g.index} is now held under ${after.limitW ?? Number(value)} W until the next reboot.` });
      onSet(after);
    } catch (e) {
      const code = (e as { code?: string }).code ?? 'failed';
      setOutcome({ code, text: (e as Error).message });
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <div className="inline-form" data-testid={`power-limit-${g.index}`} data-limit={g.limitW ?? ''}>
      <label htmlFor={`power-limit-input-${g.index}`}>
        GPU {g.index}: limit now {g.limitW ?? '—'} W{changeable ? ` (allowed ${g.minW}–${g.maxW} W)` : ' (the driver allows no change)'}
      </label>
      {changeable && (
        <>
          <input
            id={`power-limit-input-${g.index}`}
            type="number"
            className="num-input"
            min={g.minW ?? undefined}
            max={g.maxW ?? undefined}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            data-testid={`power-limit-input-${g.index}`}
          />
          {!asking ? (
            <button type="button" className="small-button" onClick={() => setAsking(true)} data-testid={`power-limit-set-${g.index}`}>
              Set limit…
            </button>
          ) : (
            <span role="group" aria-label="Confirm the power limit">
              <span className="small">
                Set GPU {g.index}&apos;s power limit to {value} W for every program on it, until the next reboot? It usually needs administrator rights.
              </span>{' '}
              <BusyButton className="small-button" busy={busy} busyLabel="Setting…" onClick={() => void set()} data-testid={`power-limit-confirm-${g.index}`}>
                Yes, set it
              </BusyButton>{' '}
              <button type="button" className="small-button" onClick={() => setAsking(false)}>
                Cancel
              </button>
            </span>
          )}
        </>
      )}
      {outcome && (
        <p
          className={outcome.code === 'gpu_power_limit_set' ? 'small' : 'small error-text'}
          role="status"
          data-testid={`power-limit-outcome-${g.index}`}
          data-code={outcome.code}
        >
          {outcome.text}
        </p>
      )}
    </div>
  );
}

export function PowerLimits() {
  const limits = useFetch(() => getBridge().invoke('gpu.powerLimits', {}), []);
  if (limits.error) return <p className="small muted">Power limits are not available: {limits.error}</p>;
  if (!limits.data || limits.data.length === 0) return null;
  return (
    <div data-testid="power-limits">
      <h3>Power limit (set by the GPU driver)</h3>
      <p className="small muted">
        A lower limit keeps a card cooler and quieter at some speed; the guard rails above act on what this app serves, this acts on the card itself.
      </p>
      {limits.data.map((g) => (
        <Row key={g.index} g={g} onSet={() => limits.reload()} />
      ))}
    </div>
  );
}
