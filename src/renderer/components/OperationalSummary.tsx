// The banner at the top of the Dashboard: the agent's verdict in one line, each finding with what to do
// next, and what only the console sees (a hot GPU, today's failures, an agent it cannot reach).
import { summarize } from '../lib/summary';
import { useStore } from '../store/store';

export function OperationalSummary() {
  const snapshot = useStore((s) => s.snapshot);
  const sample = useStore((s) => s.lastSample);
  const connection = useStore((s) => s.connection);
  if (!snapshot) return null;
  const sum = summarize(snapshot, sample, connection);
  // A single finding is the headline itself: it is not said twice.
  const headlineIsItem = sum.items[0]?.text === sum.headline;
  return (
    <section className={`op-summary op-${sum.tone}`} data-testid="op-summary" data-tone={sum.tone} data-state={sum.state} aria-label="Status summary">
      <span aria-hidden="true">{sum.tone === 'ok' ? '✓' : '!'}</span>
      <div className="op-body">
        {!headlineIsItem && (
          <p className="op-text" data-testid="verdict-headline">
            {sum.headline}
          </p>
        )}
        {sum.items.length > 0 && (
          <ul>
            {sum.items.map((i) => (
              <li key={`${i.code}${i.text}`} data-code={i.code}>
                {i.text}
                {i.next && <span className="op-next"> {i.next}</span>}
              </li>
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}
