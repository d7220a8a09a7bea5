// "Try it": a short chat to one model through the agent's own scheduler and engine client (recorded
// as a local request), streaming the answer with its time to first token and tokens per second.
import { useEffect, useMemo, useState } from 'react';
import { getBridge } from '../bridge';
import { fmtMs, fmtNumber } from '../lib/format';
import { tokensPerSecond } from '../lib/request-math';
import { useCall } from '../lib/use-call';
import { onTextDelta } from '../store/actions';
import { useStore } from '../store/store';
import { Card } from './Card';
import { ErrorText } from './Field';
import { modelSlug } from './ModelsTable';

const DEFAULT_PROMPT = 'In one sentence, what is a GPU?';

export function TryIt() {
  const models = useStore((s) => s.snapshot?.models ?? []);
  const enabled = useMemo(() => models.filter((m) => m.enabled).map((m) => m.id), [models]);
  const [model, setModel] = useState<string>('');
  const [prompt, setPrompt] = useState(DEFAULT_PROMPT);
  const [id, setId] = useState<string | null>(null);
  const [text, setText] = useState('');
  const chosen = enabled.includes(model) ? model : (enabled[0] ?? '');
  const view = useStore((s) => (id ? s.requests.find((r) => r.id === id) : undefined));
  const done = view?.finishedAt !== undefined;
  useEffect(() => {
    if (!id) return;
    return onTextDelta((rid, delta) => {
      if (rid === id) setText((t) => t + delta);
    });
  }, [id]);
  useEffect(() => {
    // The agent's copy is the whole answer (deltas may have raced the reply that named the request).
    if (!id || !done) return;
    let live = true;
    void getBridge()
      .invoke('requests.text', { id })
      .then((t) => live && t && setText(t))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [id, done]);
  const [send, state] = useCall(async () => {
    setText('');
    setId(null);
    const r = await getBridge().invoke('models.try', { model: chosen, prompt, maxTokens: 128 });
    setId(r.id);
  });
  const running = id !== null && !done;
  const ttft = view?.firstTokenAt !== undefined ? view.firstTokenAt - view.startedAt : null;
  const tps = view ? tokensPerSecond(view, performance.timeOrigin + performance.now()) : null;
  return (
    <Card title="Try a model" testId="try-card">
      {enabled.length === 0 ? (
        <p className="empty">Switch a model on to try it.</p>
      ) : (
        <form
          className="try-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          <div className="try-row">
            <label className="sr-only" htmlFor="try-model">
              Model
            </label>
            <select id="try-model" value={chosen} onChange={(e) => setModel(e.target.value)} data-testid="try-model">
              {enabled.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            <label className="sr-only" htmlFor="try-prompt">
              Prompt
            </label>
            <input id="try-prompt" value={prompt} maxLength={4000} onChange={(e) => setPrompt(e.target.value)} data-testid="try-prompt" />
            <button type="submit" className="primary" disabled={running || state.pending || !prompt.trim()} data-testid={`try-send-${modelSlug(chosen)}`}>
              {running ? 'Answering…' : 'Try it'}
            </button>
          </div>
          <p className="muted small">Runs on this machine like any request and is listed in Requests as a local request; it earns nothing.</p>
        </form>
      )}
      <ErrorText error={state.error} testId="try-error" />
      {id && (
        <div className="try-answer" data-testid="try-answer" data-status={view?.status ?? 'queued'}>
          <pre className="selectable" data-testid="try-text" aria-live="polite">
            {text || (running ? '…' : '')}
          </pre>
          <p className="muted small">
            Time to first token <span data-testid="try-ttft">{fmtMs(ttft)}</span> ·{' '}
            <span data-testid="try-tps">{tps === null ? '—' : `${fmtNumber(tps, 1)} tok/s`}</span>
            {view?.status && view.status !== 'ok' && view.status !== 'running' && view.status !== 'queued'
              ? ` · ${view.status}${view.error ? `: ${view.error}` : ''}`
              : ''}
          </p>
        </div>
      )}
    </Card>
  );
}
