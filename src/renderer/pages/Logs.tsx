// Logs: live entries at or above a level, and a support bundle to paste into a bug report.
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import { getBridge } from '../bridge';
import { Card } from '../components/Card';
import { ErrorText } from '../components/Field';
import { fmtTime } from '../lib/format';
import { useCall } from '../lib/use-call';
import { setLogs } from '../store/actions';
import { useStore, type LogLevel } from '../store/store';
import type { LogEntry } from '../../shared/types';
import { BusyButton } from '../components/BusyButton';

const LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error'];
const ROW = 26;

export function Logs() {
  const level = useStore((s) => s.logLevel);
  const logs = useStore((s) => s.logs);
  const [search, setSearch] = useState('');
  const [bundle, setBundle] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [opened, setOpened] = useState<LogEntry | null>(null);
  const [load, loadState] = useCall(async (l: LogLevel) => setLogs(await getBridge().invoke('logs.list', { level: l, limit: 2000 }), l));
  useEffect(() => {
    void load(level);
    // only on mount: later level changes load through the select
  }, []);
  const [copy, copyState] = useCall(async () => {
    const text = await getBridge().invoke('logs.bundle', {});
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setBundle(null);
    } catch {
      // No clipboard (an http page on another host): show it to copy by hand.
      setBundle(text);
      setCopied(false);
    }
  });
  const q = search.trim().toLowerCase();
  const shown = (q ? logs.filter((l) => l.msg.toLowerCase().includes(q) || l.subsystem.toLowerCase().includes(q)) : logs).slice().reverse();
  const scrollRef = useRef<HTMLDivElement>(null);
  const v = useVirtualizer({ count: shown.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 20 });
  return (
    <div className="page page-logs" data-testid="page-logs">
      <h1>Logs</h1>
      <div className="toolbar">
        <label>
          <span>Level</span>
          <select value={level} onChange={(e) => void load(e.target.value as LogLevel)} data-testid="log-level">
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l} and above
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Search</span>
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} data-testid="log-search" />
        </label>
        <BusyButton onClick={() => void copy()} data-testid="copy-bundle" busy={copyState.pending} busyLabel="Collecting…">
          Copy support bundle
        </BusyButton>
        {copied && (
          <span className="muted small" role="status" data-testid="bundle-copied">
            Support bundle copied. Paste it into your bug report; keys and tokens are removed.
          </span>
        )}
      </div>
      <ErrorText error={loadState.error ?? copyState.error} />
      {bundle && (
        <Card title="Support bundle (copy it by hand: this page has no clipboard access)">
          <textarea className="bundle" readOnly value={bundle} rows={10} data-testid="bundle-text" onFocus={(e) => e.currentTarget.select()} />
        </Card>
      )}
      {opened && (
        <Card
          title="Log entry"
          testId="log-entry"
          actions={
            <button type="button" className="small-button" onClick={() => setOpened(null)} data-testid="log-entry-close">
              Close
            </button>
          }
        >
          <p className="muted small">
            {fmtTime(opened.ts)} · {opened.level} · {opened.subsystem}
            {opened.requestId ? ` · request ${opened.requestId}` : ''}
          </p>
          <pre className="request-text selectable" data-testid="log-entry-text">
            {opened.msg}
          </pre>
        </Card>
      )}
      {/* Focusable, so the keyboard scrolls it (arrow keys, Page Up/Down). */}
      <div className="log-view" ref={scrollRef} data-testid="log-list" data-level={level} role="log" aria-label="Log entries" tabIndex={0}>
        {shown.length === 0 && <p className="empty">No log entries at this level.</p>}
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((item) => {
            const e = shown[item.index]!;
            return (
              <div
                key={item.key}
                className={`log-row lvl-${e.level}`}
                style={{ transform: `translateY(${item.start}px)`, height: ROW }}
                data-testid="log-row"
                data-level={e.level}
              >
                <span className="mono muted">{fmtTime(e.ts)}</span>
                <span className={`log-level lvl-${e.level}`}>{e.level}</span>
                <span className="mono muted">{e.subsystem}</span>
                <button type="button" className="log-msg" title="Show the whole line" onClick={() => setOpened(e)} data-testid="log-msg">
                  {e.msg}
                </button>
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
