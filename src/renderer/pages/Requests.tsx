// The live request list (virtualised: 10,000 rows stay smooth) and the streaming text of the selected one.
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useMemo, useRef, useState } from 'react';
import type { RequestSource, RequestStatus, RequestView } from '../../shared/types';
import { StatusBadge } from '../components/Badge';
import { RequestDetail } from '../components/RequestDetail';
import { fmtInt, fmtMs, fmtNumber, fmtTime } from '../lib/format';
import { latencyOf, tokensPerSecond } from '../lib/request-math';
import { selectRequest } from '../store/actions';
import { useStore } from '../store/store';

const ROW_HEIGHT = 34;
const closeDetail = () => selectRequest(null);
const STATUSES: RequestStatus[] = ['queued', 'running', 'ok', 'error', 'cancelled', 'rejected'];

interface Filters {
  search: string;
  status: '' | RequestStatus;
  source: '' | RequestSource;
  model: string;
}

function useFiltered(requests: RequestView[], f: Filters): RequestView[] {
  return useMemo(() => {
    const q = f.search.trim().toLowerCase();
    const out: RequestView[] = [];
    // newest first
    for (let i = requests.length - 1; i >= 0; i--) {
      const r = requests[i]!;
      if (f.status && r.status !== f.status) continue;
      if (f.source && r.source !== f.source) continue;
      if (f.model && r.model !== f.model) continue;
      if (q && !r.model.toLowerCase().includes(q) && !r.id.toLowerCase().includes(q)) continue;
      out.push(r);
    }
    return out;
  }, [requests, f]);
}

/** One list row; memoised so scrolling renders only the rows that come into view. */
const RequestRow = memo(function RequestRow({
  r,
  index,
  start,
  selected,
  now,
}: {
  r: RequestView;
  index: number;
  start: number;
  selected: boolean;
  now: number;
}) {
  const tps = tokensPerSecond(r, now);
  return (
    <div
      role="row"
      tabIndex={0}
      aria-rowindex={index + 2}
      aria-selected={selected}
      className="request-row"
      style={{ transform: `translateY(${start}px)`, height: ROW_HEIGHT }}
      onClick={() => selectRequest(r.id)}
      onKeyDown={(e) => {
        if (e.key === 'Enter' || e.key === ' ') {
          e.preventDefault();
          selectRequest(r.id);
        }
      }}
      data-testid="request-row"
      data-id={r.id}
      data-status={r.status}
    >
      <span role="gridcell">{fmtTime(r.startedAt)}</span>
      <span role="gridcell" className="mono ellipsis">
        {r.model}
      </span>
      <span role="gridcell">{r.source === 'hub' ? 'network' : 'local'}</span>
      <span role="gridcell" className="num">
        {fmtInt(r.tokensIn)}
      </span>
      <span role="gridcell" className="num" data-testid="request-tokens-out">
        {fmtInt(r.tokensOut)}
      </span>
      <span role="gridcell" className="num">
        {tps === null ? '—' : fmtNumber(tps, 1)}
      </span>
      <span role="gridcell" className="num">
        {fmtMs(latencyOf(r, now))}
      </span>
      <span role="gridcell">
        <StatusBadge status={r.status} />
      </span>
    </div>
  );
});

export function Requests() {
  const requests = useStore((s) => s.requests);
  const selectedId = useStore((s) => s.selectedRequestId);
  const [filters, setFilters] = useState<Filters>({ search: '', status: '', source: '', model: '' });
  const rows = useFiltered(requests, filters);
  const models = useMemo(() => [...new Set(requests.map((r) => r.model))].sort(), [requests]);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const selected = selectedId ? requests.find((r) => r.id === selectedId) : undefined;
  // Running rows get the precise clock (tok/s and latency of a live request); finished rows ignore it
  // and get a constant, so they keep equal props (and skip re-rendering) while scrolling.
  const now = performance.timeOrigin + performance.now();
  return (
    <div className="page page-requests" data-testid="page-requests">
      <h1>Requests</h1>
      <div className="filters" role="search">
        <label>
          <span>Search</span>
          <input
            type="search"
            value={filters.search}
            onChange={(e) => setFilters({ ...filters, search: e.target.value })}
            placeholder="model or id"
            data-testid="filter-search"
          />
        </label>
        <label>
          <span>Status</span>
          <select value={filters.status} onChange={(e) => setFilters({ ...filters, status: e.target.value as Filters['status'] })} data-testid="filter-status">
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Source</span>
          <select value={filters.source} onChange={(e) => setFilters({ ...filters, source: e.target.value as Filters['source'] })} data-testid="filter-source">
            <option value="">all</option>
            <option value="hub">Swan network</option>
            <option value="local">Local (apps, tests, checks)</option>
          </select>
        </label>
        <label>
          <span>Model</span>
          <select value={filters.model} onChange={(e) => setFilters({ ...filters, model: e.target.value })} data-testid="filter-model">
            <option value="">all</option>
            {models.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <span className="muted small" data-testid="request-count">
          {fmtInt(rows.length)} of {fmtInt(requests.length)} requests
        </span>
      </div>
      <div className={`requests-split${selected ? ' has-detail' : ''}`}>
        <div className="request-table" role="grid" aria-label="Requests" aria-rowcount={rows.length + 1}>
          <div className="request-row request-head" role="row">
            <span role="columnheader">Time</span>
            <span role="columnheader">Model</span>
            <span role="columnheader">Source</span>
            <span role="columnheader" className="num">
              In
            </span>
            <span role="columnheader" className="num">
              Out
            </span>
            <span role="columnheader" className="num">
              tok/s
            </span>
            <span role="columnheader" className="num">
              Latency
            </span>
            <span role="columnheader">Status</span>
          </div>
          <div className="request-scroll" ref={scrollRef} data-testid="request-scroll">
            {rows.length === 0 && (
              <p className="empty">
                {requests.length === 0 ? 'No requests yet. They appear here live as the network sends them.' : 'No request matches these filters.'}
              </p>
            )}
            <div style={{ height: virtualizer.getTotalSize(), position: 'relative' }}>
              {virtualizer.getVirtualItems().map((v) => {
                const r = rows[v.index]!;
                // Keys from a small pool: scrolling reuses row elements instead of creating new ones.
                return (
                  <RequestRow
                    key={v.index % 128}
                    r={r}
                    index={v.index}
                    start={v.start}
                    selected={r.id === selectedId}
                    now={r.finishedAt === undefined ? now : 0}
                  />
                );
              })}
            </div>
          </div>
        </div>
        {selected && <RequestDetail request={selected} onClose={closeDetail} />}
      </div>
    </div>
  );
}
