// The ledger's writes: one row per finished request, priced when written, and the delivered marks of hub
// requests. record() never throws. When the file is locked, damaged, read-only or the disk is full, records
// wait in a bounded in-memory queue (oldest dropped and counted beyond maxPending), the problem is logged in
// plain words and shown by health(), and a timer retries with backoff — reopening the file when it was
// damaged or vanished — until the queue is written.
import type Database from 'better-sqlite3';
import type { UsageRecord } from '../../shared/types';
import { Ring } from '../../shared/ring';
import type { Logger } from '../base/log';
import type { LedgerSettings, PricingAt } from './stored-settings';
import type { Connection, LedgerStore } from './store';
import { validateRecord, type ValidRecord } from './usage-record';
import { csvLine, type CsvRow } from './csv';
import { describeDbFailure } from './db-errors';
import { validateRailEvent, type RailEvent } from './rail-events';

export interface WriterOptions {
  /** Records held in memory while the database is unavailable. */
  maxPending: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** Frees space kept in reserve when the disk is full (space-reserve.ts); true when some was freed. */
  freeSpace?: () => boolean;
  /** Held rows were written after a failure: the reserve may be made again. */
  recovered?: () => void;
  /** The rails' decisions held in memory while the database is unavailable (default 1,000; the oldest dropped). */
  maxPendingRails?: number;
}

interface Pending {
  rec: ValidRecord;
  /** The prices, rates and earnings flag in force when it finished. */
  pricing: PricingAt;
  /** false while its last message has not been handed to the hub (awaitingHub records). */
  delivered: boolean;
  /** Its row, once written (awaitingHub records only). */
  rowId?: number;
}

interface Statements {
  /** Inserts rows (each with its CSV line) and marks earlier rows delivered, in one transaction. */
  insertMany: (items: readonly Pending[], marks?: readonly number[]) => void;
  /** Inserts the rails' decisions (rail_events), in one transaction. */
  insertRails: (events: readonly RailEvent[]) => void;
}

const FLUSH_BATCH = 5000;
const DROP_LOG_EVERY_MS = 10_000;
/** Rows awaiting delivery that are tracked in memory (the oldest are forgotten beyond this: they stay undelivered). */
const MAX_AWAITING = 10_000;
const NO_MARKS: readonly number[] = [];
const NO_ITEMS: readonly Pending[] = [];

const INSERT_SQL = `INSERT INTO usage (request_id, source, model, endpoint, started_at, finished_at, tokens_in, tokens_out,
  estimated, latency_ms, ttft_ms, tokens_per_second, status, status_code, error, earnings, price_id,
  rate_in, rate_out, rate_source, energy_wh, cost, delivered)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export class LedgerWriter {
  private readonly queue: Ring<Pending>;
  /** The rails' decisions not yet in the database (written before the usage rows on retry). */
  private readonly rails: Ring<RailEvent>;
  railsDropped = 0;
  /** Records written (or held) as not yet delivered, by request id. */
  private readonly awaiting = new Map<string, Pending>();
  /** Row ids to mark delivered that the database could not take yet: written with the held rows on retry. */
  private marks: number[] = [];
  dropped = 0;
  invalid = 0;
  private droppedThisEpisode = 0;
  private lastDropLog = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay: number;
  private st: Statements | null = null;

  constructor(
    private readonly store: LedgerStore,
    private readonly settings: LedgerSettings,
    private readonly log: Logger,
    private readonly o: WriterOptions,
    /** The health changed in a way the owner should hear of (held records lost, the database back). */
    private readonly healthChanged: () => void,
  ) {
    this.queue = new Ring<Pending>(o.maxPending);
    this.rails = new Ring<RailEvent>(o.maxPendingRails ?? 1000);
    this.retryDelay = o.retryMinMs;
    store.on('open', (conn) => this.prepare(conn));
    store.on('failure', () => this.scheduleRetry());
  }

  /** Records held in memory, not yet in the database. */
  get pending(): number {
    return this.queue.size;
  }

  /** Stores one finished request. Never throws; see the ledger's health() for problems. */
  record(r: UsageRecord): void {
    try {
      const checked = validateRecord(r);
      if (!checked.ok) {
        this.invalid++;
        this.log.error(`Usage record refused (${checked.reason}); it was not stored.`, { requestId: (r as Partial<UsageRecord> | null)?.requestId });
        return;
      }
      const item = this.pendingOf(checked.record);
      if (this.store.closed) {
        this.dropped++;
        this.log.error('Usage record arrived after the ledger was closed; it was not stored.', { requestId: item.rec.requestId });
        return;
      }
      if (this.store.usable && this.queue.size === 0 && this.insertNow([item])) return;
      this.hold([item]);
    } catch (err) {
      // Last resort: nothing here may break the request path.
      this.log.error(`Usage record could not be handled: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /**
   * Stores one decision of the guard rails or the pause controller. Never throws and never waits: when the
   * database cannot take it now it is held (bounded, the oldest dropped and counted) and written with the
   * held usage rows when the database works again.
   */
  recordRail(e: RailEvent): void {
    try {
      const checked = validateRailEvent(e);
      if (!checked.ok) {
        this.invalid++;
        this.log.error(`Rail decision refused (${checked.reason}); it was not stored.`, { code: e?.code });
        return;
      }
      if (this.store.closed) {
        this.railsDropped++;
        this.log.warn('A rail decision arrived after the ledger was closed; it was not stored.', { code: checked.event.code });
        return;
      }
      const st = this.st;
      if (st && this.store.usable && this.rails.size === 0) {
        try {
          this.orFreeSpace(() => st.insertRails([checked.event]));
          this.store.wrote();
          return;
        } catch (err) {
          this.store.fail(err);
        }
      }
      if (this.rails.push(checked.event)) {
        this.railsDropped++;
        if (this.railsDropped === 1 || this.railsDropped % 100 === 0) {
          this.log.error(
            `Rail decisions are being lost: ${this.rails.capacity} are already held in memory (ledger_rails_dropped: ${this.railsDropped} so far).`,
            { code: 'ledger_rails_dropped', dropped: this.railsDropped },
          );
        }
      }
      this.scheduleRetry();
    } catch (err) {
      this.log.error(`Rail decision could not be handled: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Rail decisions held in memory, not yet in the database. */
  get pendingRails(): number {
    return this.rails.size;
  }

  /** Stores many records in one transaction (imports, benches). Never throws. */
  recordBatch(records: UsageRecord[]): void {
    const items: Pending[] = [];
    for (const r of records) {
      const checked = validateRecord(r);
      if (checked.ok) items.push(this.pendingOf(checked.record));
      else {
        this.invalid++;
        this.log.error(`Usage record refused (${checked.reason}); it was not stored.`);
      }
    }
    if (items.length === 0 || this.store.closed) return;
    if (this.store.usable && this.queue.size === 0 && this.insertNow(items)) return;
    this.hold(items);
  }

  /**
   * The last messages of these awaitingHub records were handed to the hub link: their rows become
   * delivered, now, in one transaction. Until then (and after a crash in between) a row stays marked
   * undelivered, which is the safe side: it is never counted as told to the hub when that is not known.
   * Marks the database cannot take now are kept and written with the held rows when it works again.
   */
  markDelivered(...requestIds: string[]): void {
    const rows: number[] = [];
    for (const id of requestIds) {
      const item = this.awaiting.get(id);
      if (item === undefined) continue;
      this.awaiting.delete(id);
      item.delivered = true; // a record still held in memory is written as delivered
      if (item.rowId !== undefined) rows.push(item.rowId);
    }
    if (rows.length === 0) return;
    if (!this.store.usable || !this.st) {
      this.marks.push(...rows);
      this.scheduleRetry();
      return;
    }
    const st = this.st;
    try {
      this.orFreeSpace(() => st.insertMany(NO_ITEMS, rows));
    } catch (err) {
      this.marks.push(...rows);
      this.store.fail(err);
    }
  }

  /** Writes what it can of the queue (closing). */
  flushHeld(): void {
    if ((this.queue.size > 0 || this.marks.length > 0 || this.rails.size > 0) && this.store.conn) this.flush();
  }

  /** Stops retrying; says what is lost. */
  close(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.queue.size > 0) {
      // Said with its code and count (on the terminal too: the disk that refused the rows may refuse the log file).
      const lost = this.queue.size;
      this.log.error(
        `The ledger closed with ${lost} usage records it could not write; they are lost (ledger_rows_lost: ${lost}). ${this.store.failure?.message ?? ''}`.trim(),
        {
          code: 'ledger_rows_lost',
          rows: lost,
          ...(this.store.failure ? { kind: this.store.failure.kind } : {}),
        },
      );
    }
    if (this.rails.size > 0) {
      const lost = this.rails.size;
      this.log.error(`The ledger closed with ${lost} rail decisions it could not write; they are lost (ledger_rails_lost: ${lost}).`, {
        code: 'ledger_rails_lost',
        rows: lost,
      });
    }
  }

  private prepare(conn: Connection): void {
    const db = conn.db;
    const insert = db.prepare(INSERT_SQL);
    const line = db.prepare('INSERT INTO usage_csv (finished_at, id, line) VALUES (?, ?, ?)');
    const mark = db.prepare('UPDATE usage SET delivered = 1 WHERE id = ?');
    const insertMany = db.transaction((items: readonly Pending[], marks: readonly number[] = NO_MARKS) => {
      for (const it of items) this.insertRow(insert, line, it);
      for (const id of marks) mark.run(id);
    });
    const rail = db.prepare('INSERT INTO rail_events (at, code, rail, cause, active, gpu, detail) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const insertRails = db.transaction((events: readonly RailEvent[]) => {
      for (const e of events) rail.run(e.at, e.code, e.rail, e.cause, e.active ? 1 : 0, e.gpu ?? null, e.detail);
    });
    this.st = { insertMany, insertRails };
  }

  private pendingOf(rec: ValidRecord): Pending {
    const item: Pending = { rec, pricing: this.settings.current(), delivered: rec.awaitingHub !== true };
    if (!item.delivered) {
      if (this.awaiting.size >= MAX_AWAITING) this.awaiting.delete(this.awaiting.keys().next().value as string);
      this.awaiting.set(rec.requestId, item);
    }
    return item;
  }

  /** Inserts rows now (one transaction); false after the store's fail(). */
  private insertNow(items: Pending[]): boolean {
    const st = this.st;
    if (!st) return false;
    try {
      this.orFreeSpace(() => st.insertMany(items));
      this.store.wrote();
      return true;
    } catch (err) {
      this.store.fail(err);
      return false;
    }
  }

  /** One row, its CSV line (made now: a row never changes after) and, by trigger, its summaries. */
  private insertRow(insert: Database.Statement, line: Database.Statement, item: Pending): void {
    const { rec } = item;
    const { earning: e, cost } = this.settings.price(rec, item.pricing);
    const row: CsvRow = {
      request_id: rec.requestId,
      source: rec.source,
      model: rec.model,
      endpoint: rec.endpoint,
      started_at: rec.startedAt,
      finished_at: rec.finishedAt,
      tokens_in: rec.tokensIn,
      tokens_out: rec.tokensOut,
      estimated: rec.estimated ? 1 : 0,
      latency_ms: rec.latencyMs,
      ttft_ms: rec.ttftMs,
      tokens_per_second: rec.tokensPerSecond,
      status: rec.status,
      status_code: rec.statusCode,
      error: rec.error,
      earnings: e.earnings,
      input_per_m: e.rate?.inputPerM ?? null,
      output_per_m: e.rate?.outputPerM ?? null,
      rate_source: e.source,
      energy_wh: rec.energyWh ?? null,
      cost,
    };
    const info = insert.run(
      row.request_id,
      row.source,
      row.model,
      row.endpoint,
      row.started_at,
      row.finished_at,
      row.tokens_in,
      row.tokens_out,
      row.estimated,
      row.latency_ms,
      row.ttft_ms,
      row.tokens_per_second,
      row.status,
      row.status_code,
      row.error,
      row.earnings,
      e.priceId,
      row.input_per_m,
      row.output_per_m,
      row.rate_source,
      row.energy_wh,
      row.cost,
      item.delivered ? 1 : 0,
    );
    const id = Number(info.lastInsertRowid);
    line.run(row.finished_at, id, csvLine(row));
    if (!item.delivered) item.rowId = id;
  }

  private hold(items: Pending[]): void {
    let droppedNow = 0;
    for (const it of items) it.rowId = undefined; // a failed transaction rolled its rows back
    for (const it of items) if (this.queue.push(it)) droppedNow++;
    if (droppedNow > 0) {
      this.dropped += droppedNow;
      this.droppedThisEpisode += droppedNow;
      const t = Date.now();
      if (this.droppedThisEpisode === droppedNow || t - this.lastDropLog >= DROP_LOG_EVERY_MS) {
        this.lastDropLog = t;
        this.log.error(
          `Usage records are being lost: ${this.queue.capacity} are already held in memory, so the oldest are dropped ` +
            `(${this.droppedThisEpisode} so far). ${this.store.failure?.message ?? ''}`.trim(),
        );
        this.healthChanged();
      }
    }
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.store.closed || (!this.store.failure && this.queue.size === 0 && this.marks.length === 0 && this.rails.size === 0)) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.o.retryMaxMs, this.retryDelay * 2);
    this.retryTimer = setTimeout(() => this.retry(), delay);
    this.retryTimer.unref();
  }

  private retry(): void {
    this.retryTimer = null;
    if (this.store.closed) return;
    if (!this.store.conn && !this.store.connect()) return; // connect() failed and rescheduled
    const held = this.queue.size;
    if (!this.flush()) return; // flush() failed and rescheduled
    const wasFailing = this.store.failure !== null;
    this.store.recovered();
    this.retryDelay = this.o.retryMinMs;
    if (wasFailing || held > 0) {
      const lost = this.droppedThisEpisode > 0 ? ` ${this.droppedThisEpisode} records were dropped while it was away.` : '';
      this.log.info(`The usage database ${this.store.file} is working again; wrote ${held} held records.${lost}`, {
        code: 'ledger_ok',
        rows: held,
        dropped: this.droppedThisEpisode,
      });
      this.droppedThisEpisode = 0;
      this.healthChanged();
      this.o.recovered?.();
    }
  }

  /**
   * Runs one write transaction; when the disk refused it for lack of space and the reserve could be freed,
   * once more at once (the transaction was rolled back whole). Otherwise the failure is the caller's.
   */
  private orFreeSpace(write: () => void): void {
    try {
      write();
    } catch (err) {
      if (!this.o.freeSpace || describeDbFailure(this.store.file, err).kind !== 'full' || !this.o.freeSpace()) throw err;
      write();
    }
  }

  /** Writes the queue in batches; false (after the store's fail()) when the database refused. */
  private flush(): boolean {
    const st = this.st;
    if (!this.store.conn || !st) return false;
    // Delivered marks kept while the database was away go with the first batch (or alone when none is held).
    let marks = this.takeMarks();
    try {
      if (this.rails.size > 0) {
        const events = this.rails.peek();
        this.orFreeSpace(() => st.insertRails(events));
        this.rails.drop(events.length);
      }
      while (this.queue.size > 0) {
        const batch = this.queue.peek(FLUSH_BATCH);
        const m = marks;
        this.orFreeSpace(() => st.insertMany(batch, m));
        marks = NO_MARKS;
        this.queue.drop(batch.length);
      }
      const m = marks;
      if (m.length > 0) this.orFreeSpace(() => st.insertMany(NO_ITEMS, m));
      this.store.wrote();
      return true;
    } catch (err) {
      for (const it of this.queue.peek(FLUSH_BATCH)) it.rowId = undefined; // rolled back
      this.marks.push(...marks);
      this.store.fail(err);
      return false;
    }
  }

  private takeMarks(): readonly number[] {
    if (this.marks.length === 0) return NO_MARKS;
    const ids = this.marks;
    this.marks = [];
    return ids;
  }
}
