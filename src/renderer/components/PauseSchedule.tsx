// The owner's weekly pause windows: serving pauses by itself inside them (say, evenings when the
// GPU is for games) and resumes after. Saved through settings.save; errors shown next to the editor.
import { useEffect, useState } from 'react';
import type { PauseWindowView } from '../../shared/views/settings';
import { getBridge } from '../bridge';
import { ErrorText } from './Field';
import { useCall } from '../lib/use-call';
import { setSettings } from '../store/actions';
import { useStore } from '../store/store';
import { BusyButton } from './BusyButton';

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

export function PauseSchedule() {
  const saved = useStore((s) => s.settings?.pauseSchedule);
  // On a rig with several GPUs a window may pause one GPU only (the others keep serving).
  const gpus = useStore((s) => s.snapshot?.gpuServing);
  const [rows, setRows] = useState<PauseWindowView[]>([]);
  useEffect(() => setRows(saved ?? []), [saved]);
  const update = (i: number, patch: Partial<PauseWindowView>): void => setRows((r) => r.map((w, j) => (j === i ? { ...w, ...patch } : w)));
  const [save, state] = useCall(async () => {
    const r = await getBridge().invoke('settings.save', { patch: { pauseSchedule: rows } });
    if (!r.ok) throw new Error(Object.values(r.errors).join(' '));
    setSettings(await getBridge().invoke('settings.get', {}));
  });
  return (
    <div className="pause-schedule" data-testid="pause-schedule">
      <h3>Pause on a schedule</h3>
      {rows.length === 0 && <p className="muted small">No windows: serving is not paused on a schedule.</p>}
      {rows.map((w, i) => (
        <fieldset key={i} className="schedule-row" data-testid={`schedule-row-${i}`}>
          <legend className="sr-only">Pause window {i + 1}</legend>
          {DAYS.map((d, day) => (
            <label key={d} className="day-check">
              <input
                type="checkbox"
                checked={w.days.includes(day)}
                onChange={(e) => update(i, { days: e.target.checked ? [...w.days, day].sort() : w.days.filter((x) => x !== day) })}
              />
              {d}
            </label>
          ))}
          <label>
            from <input type="time" value={w.from} onChange={(e) => update(i, { from: e.target.value })} data-testid={`schedule-from-${i}`} />
          </label>
          <label>
            to <input type="time" value={w.to} onChange={(e) => update(i, { to: e.target.value })} data-testid={`schedule-to-${i}`} />
          </label>
          {gpus && gpus.length > 0 && (
            <label>
              pause{' '}
              <select
                value={w.gpus?.length === 1 ? String(w.gpus[0]) : 'all'}
                onChange={(e) => {
                  const v = e.target.value;
                  setRows((r) =>
                    r.map((x, j) => {
                      if (j !== i) return x;
                      const { gpus: _old, ...rest } = x;
                      return v === 'all' ? rest : { ...rest, gpus: [Number(v)] };
                    }),
                  );
                }}
                data-testid={`schedule-gpus-${i}`}
              >
                <option value="all">every GPU</option>
                {gpus.map((g) => (
                  <option key={g.index} value={String(g.index)}>
                    GPU {g.index} only
                  </option>
                ))}
              </select>
            </label>
          )}
          <button type="button" className="small-button" onClick={() => setRows((r) => r.filter((_, j) => j !== i))} aria-label={`Remove window ${i + 1}`}>
            Remove
          </button>
        </fieldset>
      ))}
      <div className="form-actions">
        <button
          type="button"
          className="small-button"
          onClick={() => setRows((r) => [...r, { days: [1, 2, 3, 4, 5], from: '18:00', to: '23:00' }])}
          data-testid="schedule-add"
        >
          Add a window
        </button>
        <BusyButton onClick={() => void save()} data-testid="schedule-save" busy={state.pending} busyLabel="Saving…">
          Save schedule
        </BusyButton>
      </div>
      <p className="muted small">Times are this machine&apos;s local time. A window whose end is before its start runs past midnight.</p>
      <ErrorText error={state.error} testId="schedule-error" />
    </div>
  );
}
