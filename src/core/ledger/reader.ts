// What the console, the CLI and the agent ask of the ledger: totals, reports, the lifetime comparison
// with the platform, recent rows and the CSV. Ranges are [from, to) in epoch ms of finishedAt. A query of a
// file that cannot be read throws LedgerUnavailableError with owner-facing text, except today() and
// last(), which feed status displays and answer zeros (health() says why).
import type { ModelUsage, RailEventView, RailSpanSummary, UsageReport } from '../../shared/views/usage';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import { csvHeaderLine } from './csv';
import { LedgerUnavailableError, LedgerValueError } from './db-errors';
import { emptyTotals, type HubLifetime } from './queries';
import { railCost, railSpans, railView, type RailRow } from './rail-events';
import type { LedgerStore } from './store';
import { DAY_MS, startOfLocalDay, type BucketSize } from './time-buckets';
import { waitForDrain, type WritableLike } from './write-stream';

/** CSV lines read per page: a page is read in one go, so writes are never held across an await. */
const CSV_PAGE = 5000;

export function checkRange(from: number, to: number): void {
  if (!Number.isFinite(from) || !Number.isFinite(to) || from < 0)
    throw new LedgerValueError('invalid_range', `Invalid time range ${from}..${to}: use epoch milliseconds.`);
  if (to < from) throw new LedgerValueError('range_reversed', 'The end of the range is before its start.', 'to');
}

/** Rail decisions read for one summary at most (a day of a flapping cause is far under this). */
const RAIL_ROWS_MAX = 100_000;
/** The rails' cost is estimated at the rate of this node's last 7 days of serving. */
const COST_BASIS_MS = 7 * DAY_MS;

export class LedgerReader {
  constructor(
    private readonly store: LedgerStore,
    private readonly now: () => number,
  ) {}

  /** The time paused and throttled in [from, to) by cause; a span still open ends now (or at `to`). */
  railSummary(from: number, to: number): RailSpanSummary {
    checkRange(from, to);
    const end = Math.max(from, Math.min(to, this.now()));
    return this.store.read((_q, conn) => {
      // The state at `from`: the last row before it of each rail and cause, and the last start of the agent.
      const before = conn.db
        .prepare('SELECT * FROM rail_events WHERE id IN (SELECT max(id) FROM rail_events WHERE at < ? GROUP BY rail, cause)')
        .all(from) as RailRow[];
      const within = conn.db.prepare(`SELECT * FROM rail_events WHERE at >= ? AND at < ? ORDER BY id LIMIT ${RAIL_ROWS_MAX}`).all(from, end) as RailRow[];
      return railSpans(before, within, from, end);
    });
  }

  /** railSummary with what the pauses cost: requests declined (counted) and an estimate from the last 7 days' rate. */
  railSummaryWithCost(from: number, to: number): RailSpanSummary {
    const summary = this.railSummary(from, to);
    const end = Math.max(from, Math.min(to, this.now()));
    const basisTo = this.now();
    const week = this.railSummary(basisTo - COST_BASIS_MS, basisTo);
    return this.store.read((_q, conn) => {
      // On finished_at, the indexed column: a full table scan on every Usage refresh would grow with the ledger.
      const first = conn.db.prepare("SELECT finished_at AS t FROM usage WHERE source = 'hub' ORDER BY finished_at LIMIT 1").get() as { t: number } | undefined;
      const basisFrom = Math.max(basisTo - COST_BASIS_MS, first?.t ?? basisTo);
      const paid = conn.db
        .prepare(
          "SELECT count(*) AS n, coalesce(sum(earnings), 0) AS e FROM usage WHERE source = 'hub' AND status = 'ok' AND finished_at >= ? AND finished_at < ?",
        )
        .get(basisFrom, basisTo) as { n: number; e: number };
      const declined = conn.db
        .prepare("SELECT count(*) AS n FROM usage WHERE source = 'hub' AND status = 'rejected' AND status_code = 429 AND finished_at >= ? AND finished_at < ?")
        .get(from, end) as { n: number };
      // Paused time inside the basis is not served time; a basis that starts later than the week's start had less.
      const servedMs = basisTo - basisFrom - Math.min(week.pausedMs, basisTo - basisFrom);
      return { ...summary, cost: railCost(summary, { servedMs, hubRequests: paid.n, earnings: paid.e }, declined.n) };
    });
  }

  /** The latest rail decisions, newest first (at most 500). */
  recentRails(limit: number): RailEventView[] {
    const n = Math.max(0, Math.min(500, Math.floor(limit)));
    return this.store.read((_q, conn) => (conn.db.prepare('SELECT * FROM rail_events ORDER BY id DESC LIMIT ?').all(n) as RailRow[]).map(railView));
  }

  totals(from: number, to: number): UsageTotals {
    checkRange(from, to);
    return this.store.read((q) => q.totals(from, to));
  }

  report(from: number, to: number, bucket: BucketSize): UsageReport {
    checkRange(from, to);
    return this.store.read((q) => q.report(from, to, bucket));
  }

  /** Since local midnight; zeros (never an exception) while the database cannot be read. */
  today(): UsageTotals {
    const now = this.now();
    return this.statusTotals(startOfLocalDay(now), now + 1);
  }

  /** The last `days` × 24 hours up to now; zeros while the database cannot be read, like today(). */
  last(days: number): UsageTotals {
    const now = this.now();
    return this.statusTotals(Math.max(0, now - days * DAY_MS), now + 1);
  }

  /** What this ledger holds of hub traffic over its whole life (for comparing with the platform's record). */
  hubLifetime(): HubLifetime {
    return this.store.read((q) => q.hubLifetime());
  }

  topModels(from: number, to: number, n: number): ModelUsage[] {
    checkRange(from, to);
    return this.store.read((q) => q.perModel(from, to)).slice(0, Math.max(0, n));
  }

  /** The newest records, newest first. */
  recent(limit: number): UsageRecord[] {
    const n = Math.min(10_000, Math.max(1, Math.floor(limit)));
    return this.store.read((q) => q.recent(n));
  }

  exportCsv(from: number, to: number): string {
    checkRange(from, to);
    return this.store.read((q) => {
      const parts = [csvHeaderLine()];
      for (let page = q.csvPage(from, to, null, CSV_PAGE); ; page = q.csvPage(from, to, page.next, CSV_PAGE)) {
        parts.push(page.text);
        if (!page.next) break;
      }
      return parts.join('');
    });
  }

  /** Writes the CSV of [from, to) to `stream` page by page, honouring backpressure. Does not end the
   * stream. Resolves with the number of records written. */
  async exportCsvTo(stream: WritableLike, from: number, to: number): Promise<number> {
    checkRange(from, to);
    let rows = 0;
    if (!stream.write(csvHeaderLine())) await waitForDrain(stream);
    for (let page = this.store.read((q) => q.csvPage(from, to, null, CSV_PAGE)); ;) {
      if (page.rows > 0 && !stream.write(page.text)) await waitForDrain(stream);
      rows += page.rows;
      const next = page.next;
      if (!next) return rows;
      page = this.store.read((q) => q.csvPage(from, to, next, CSV_PAGE));
    }
  }

  private statusTotals(from: number, to: number): UsageTotals {
    try {
      return this.totals(from, to);
    } catch (err) {
      if (!(err instanceof LedgerUnavailableError)) throw err;
      return emptyTotals();
    }
  }
}
