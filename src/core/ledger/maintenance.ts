// Looking after the file: retention (old rows go with their rollups and summaries, oldest first, in short
// transactions each leaving rows and summaries consistent) and SQLite's own consistency check.
import type { Logger } from '../base/log';
import { LedgerUnavailableError, LedgerValueError } from './db-errors';
import { ROLLUP_DAY_MS, ROLLUP_MS } from './migrations';
import type { LedgerStore } from './store';
import { DAY_MS } from './time-buckets';
import { PERF_BLOCK_MS, perfFromRowsSql } from './summaries';

/** Rows deleted per transaction at most (the agent's writes wait for no longer than one of these). */
const PRUNE_STEP_ROWS = 20_000;

export class LedgerMaintenance {
  constructor(
    private readonly store: LedgerStore,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /**
   * Deletes records that finished more than `retentionDays` ago (cut at a 15-minute edge so the
   * rollups stay exact). 0 or less keeps everything. Works oldest first in short transactions, each
   * leaving records and rollups consistent. Returns the number of records deleted.
   */
  prune(retentionDays: number): number {
    if (!Number.isFinite(retentionDays)) throw new LedgerValueError('invalid_retention', `Retention must be a number of days (got ${retentionDays}).`);
    if (retentionDays <= 0) return 0;
    const cutoff = Math.floor((this.now() - retentionDays * DAY_MS) / ROLLUP_MS) * ROLLUP_MS;
    const conn = this.store.requireConn();
    const nth = conn.db.prepare('SELECT finished_at AS t FROM usage INDEXED BY usage_finished WHERE finished_at < ? ORDER BY finished_at LIMIT 1 OFFSET ?');
    const delRows = conn.db.prepare('DELETE FROM usage WHERE finished_at < ?');
    const delRollups = conn.db.prepare('DELETE FROM usage_15m WHERE bucket < ?');
    // A day cut part-way keeps what is left of it: its rows are summed again (under a day of them).
    const delDays = conn.db.prepare('DELETE FROM usage_1d WHERE day < ?');
    const redoDay = conn.db.prepare(
      `INSERT INTO usage_1d (day, model, requests, errors, tokens_in, tokens_out, earnings, hub_requests, hub_errors, hub_tokens_in, hub_tokens_out, energy_wh, cost)
       SELECT @day, model, count(*), sum(status IN ('error', 'rejected')), sum(tokens_in), sum(tokens_out), sum(earnings), sum(source = 'hub'),
              sum(source = 'hub' AND status IN ('error', 'rejected')), sum(CASE WHEN source = 'hub' THEN tokens_in ELSE 0 END),
              sum(CASE WHEN source = 'hub' THEN tokens_out ELSE 0 END), sum(coalesce(energy_wh, 0)), sum(coalesce(cost, 0))
       FROM usage WHERE finished_at >= @day AND finished_at < @day + ${ROLLUP_DAY_MS} GROUP BY model`,
    );
    // The summaries kept as rows are written (summaries.ts) go with them; a day or block cut part-way is
    // made again from what is left of it.
    const delCsv = conn.db.prepare('DELETE FROM usage_csv WHERE finished_at < ?');
    const delRails = conn.db.prepare('DELETE FROM rail_events WHERE at < ?');
    const delPerfDays = conn.db.prepare('DELETE FROM usage_perf_1d WHERE day < ?');
    const redoPerfDay = conn.db.prepare(perfFromRowsSql('usage_perf_1d'));
    const delPerfBlocks = conn.db.prepare('DELETE FROM usage_perf_16d WHERE block < ?');
    const redoPerfBlock = conn.db.prepare(
      `INSERT INTO usage_perf_16d (block, model, metric, bin, n)
       SELECT @block, model, metric, bin, sum(n) FROM usage_perf_1d WHERE day >= @block AND day < @block + ${PERF_BLOCK_MS} GROUP BY model, metric, bin`,
    );
    const step = conn.db.transaction((upTo: number) => {
      const n = delRows.run(upTo).changes;
      delRollups.run(upTo);
      delDays.run(upTo);
      delCsv.run(upTo);
      delRails.run(upTo);
      delPerfDays.run(upTo);
      delPerfBlocks.run(upTo);
      const day = upTo - (upTo % ROLLUP_DAY_MS);
      if (day < upTo) {
        redoDay.run({ day });
        redoPerfDay.run({ from: day, to: day + ROLLUP_DAY_MS });
      }
      const block = upTo - (upTo % PERF_BLOCK_MS);
      if (block < upTo) redoPerfBlock.run({ block });
      return n;
    });
    let deleted = 0;
    try {
      for (;;) {
        const row = nth.get(cutoff, PRUNE_STEP_ROWS) as { t: number } | undefined;
        const upTo = row ? Math.min(cutoff, Math.ceil((row.t + 1) / ROLLUP_MS) * ROLLUP_MS) : cutoff;
        deleted += step(upTo);
        if (upTo >= cutoff) break;
      }
    } catch (err) {
      this.store.fail(err);
      throw new LedgerUnavailableError(this.store.failure?.kind ?? 'unavailable', this.store.failure?.message ?? String(err));
    }
    if (deleted > 0) this.log.info(`Removed ${deleted} usage records older than ${retentionDays} days.`);
    return deleted;
  }

  /** SQLite's quick_check: 'ok' or the problems found. */
  integrityCheck(): string {
    return this.store.read((_q, conn) => {
      const rows = conn.db.pragma('quick_check') as Array<{ quick_check: string }>;
      return rows.map((r) => r.quick_check).join('\n');
    });
  }
}
