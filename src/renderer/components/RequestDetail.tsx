// One request in full (Requests page, a model's page): id, model, source, its timings with the wait in
// the queue apart from the engine's time to first token, the tokens as the engine reported them (or
// marked estimated), status and error, what the ledger booked for it, and its streaming text.
import { useEffect, useRef, useState } from 'react';
import type { RequestView } from '../../shared/types';
import { getBridge } from '../bridge';
import { fmtDateTime, fmtInt, fmtMoney, fmtMs, fmtNumber } from '../lib/format';
import { purposeOf } from '../lib/purpose';
import { engineTtft, latencyOf, queueWait, tokensPerSecond } from '../lib/request-math';
import { onTextDelta, setFetchedText, texts } from '../store/actions';
import { useStore } from '../store/store';
import { StatusBadge } from './Badge';
import { Card } from './Card';

function RequestText({ id }: { id: string }) {
  useStore((s) => s.textVersion);
  const [state, setState] = useState<{ loading: boolean; error: string | null }>({ loading: false, error: null });
  const preRef = useRef<HTMLPreElement>(null);
  useEffect(() => {
    // Fetch the text so far; deltas that arrive meanwhile are joined without doubling (joinFetched).
    let live = true;
    let during = '';
    const off = onTextDelta((rid, delta) => {
      if (rid === id) during += delta;
    });
    setState({ loading: true, error: null });
    getBridge()
      .invoke('requests.text', { id })
      .then(
        (text) => {
          if (!live) return;
          setFetchedText(id, text, during);
          setState({ loading: false, error: null });
        },
        (err: unknown) => {
          if (live) setState({ loading: false, error: (err as Error).message });
        },
      )
      .finally(off);
    return () => {
      live = false;
      off();
    };
  }, [id]);
  const text = texts.get(id) ?? '';
  useEffect(() => {
    const el = preRef.current;
    if (el && el.scrollHeight - el.scrollTop - el.clientHeight < 80) el.scrollTop = el.scrollHeight;
  });
  return (
    <>
      {state.error && <p className="error-text">Could not load the text: {state.error}</p>}
      <pre className="request-text" ref={preRef} data-testid="request-text" aria-live="off" tabIndex={0} aria-label="The answer's text">
        {text || (state.loading ? 'Loading…' : 'No text (yet).')}
      </pre>
    </>
  );
}

function earningsOf(r: RequestView): string {
  if (r.source !== 'hub') return 'none: only Swan network requests are paid';
  if (r.earnings === undefined) return r.finishedAt === undefined ? 'when it finishes' : '—';
  return fmtMoney(r.earnings);
}

export function RequestDetail({ request, onClose }: { request: RequestView; onClose: () => void }) {
  const tps = tokensPerSecond(request);
  const wait = queueWait(request);
  const ttft = engineTtft(request);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <Card
      title={<span className="mono break">{request.id}</span>}
      testId="request-detail"
      className="request-detail"
      actions={
        <button type="button" onClick={onClose} data-testid="request-detail-close" aria-keyshortcuts="Escape">
          Close
        </button>
      }
    >
      <dl className="detail-grid">
        <dt>Model</dt>
        <dd className="mono break" data-testid="request-detail-model">
          {request.model}
        </dd>
        <dt>Status</dt>
        <dd data-testid="request-detail-status">
          <StatusBadge status={request.status} /> {request.statusCode ? <span className="muted">HTTP {request.statusCode}</span> : null}
        </dd>
        <dt>Source</dt>
        <dd data-testid="request-detail-source">{purposeOf(request)}</dd>
        <dt>Started</dt>
        <dd>{fmtDateTime(request.startedAt)}</dd>
        <dt>Wait in the queue</dt>
        <dd data-testid="request-detail-queue">{wait === null ? (request.status === 'queued' ? 'still waiting' : '—') : fmtMs(wait)}</dd>
        <dt>First token</dt>
        <dd data-testid="request-detail-ttft">{ttft === null ? '—' : `${fmtMs(ttft)} after the engine got it`}</dd>
        <dt>Total time</dt>
        <dd data-testid="request-detail-latency">{fmtMs(latencyOf(request))}</dd>
        <dt>Tokens</dt>
        <dd data-testid="request-detail-tokens">
          {fmtInt(request.tokensIn)} in / {fmtInt(request.tokensOut)} out
          <span className="muted small block">
            {request.finishedAt === undefined
              ? 'counted so far'
              : request.estimated
                ? 'estimated: the engine reported no usage'
                : 'as the engine reported them'}
          </span>
        </dd>
        <dt>Speed</dt>
        <dd>{tps === null ? '—' : `${fmtNumber(tps, 1)} tok/s`}</dd>
        <dt>Earnings</dt>
        <dd data-testid="request-detail-earnings">{earningsOf(request)}</dd>
        <dt>Endpoint</dt>
        <dd className="mono break">{request.endpoint ?? '—'}</dd>
      </dl>
      {request.error && (
        <p className="error-text" data-testid="request-detail-error">
          {request.error}
        </p>
      )}
      <RequestText id={request.id} />
    </Card>
  );
}
