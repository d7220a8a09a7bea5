// One line at the top of the Dashboard: what needs attention now, or that all is well.
import { summarize } from '../lib/summary';
import { useStore } from '../store/store';

export function OperationalSummary() {
  const snapshot = useStore((s) => s.snapshot);
  const sample = useStore((s) => s.lastSample);
  if (!snapshot) return null;
  const sum = summarize(snapshot, sample);
  return (
    <section className={`op-summary op-${sum.tone}`} data-testid="op-summary" data-tone={sum.tone} aria-label="Status summary">
      <span aria-hidden="true">{sum.tone === 'ok' ? '✓' : '!'}</span>
      {sum.ok ? (
        <p className="op-text">{sum.ok}</p>
      ) : (
        <ul>
          {sum.items.map((i) => (
            <li key={`${i.code}${i.text}`} data-code={i.code}>
              {i.text}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
