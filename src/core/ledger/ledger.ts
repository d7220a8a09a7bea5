// The usage and earnings ledger: one SQLite row per finished request, in the home folder.
//
// Durability: WAL with synchronous = NORMAL. record() commits before it returns: the row is written
// to the WAL (in the OS cache) before the call ends, so a record whose record() returned survives a
// killed or crashed agent (tested with SIGKILL) and the file is never corrupted. FULL would also
// survive a power cut, at one fsync per finished request on the agent's only thread: `npm run bench`
// measured that stall holding every other live stream (relay p99 +37..+189 ms with FULL against
// +18 ms with the ledger off), so the agent takes NORMAL — a power cut can roll back the last
// moments of records, never a stream's tokens.
//
// Availability: record() never throws. When the file is locked, damaged, read-only or the disk is
// full, records wait in a bounded in-memory queue (oldest dropped and counted beyond maxPending),
// the problem is logged in plain words and shown by health(), and a timer retries with backoff —
// reopening the file when it was damaged or vanished — until the queue is written.
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ModelUsage, UsageReport } from '../../shared/bridge';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import { memoryLog, type Logger } from '../log';
import { Ring } from '../../shared/ring';
import { csvHeaderLine, csvLine } from './csv';
import { LedgerUnavailableError, LedgerValueError, describeDbFailure, type DbFailure } from './db-errors';
import { migrate, ROLLUP_DAY_MS, ROLLUP_MS } from './migrations';
import { PriceBook, type PriceRow, type Rate } from './price-book';
import { UsageQueries, emptyTotals, type Cursor, type CsvPageRow, type HubLifetime } from './queries';
import { DAY_MS, startOfLocalDay, type BucketSize } from './time-buckets';
import { validateRecord, type ValidRecord } from './usage-record';
import { waitForDrain, type WritableLike } from './write-stream';
import { CheckpointHandoff, type CheckpointHandoffOptions } from './checkpoint-handoff';

export interface LedgerOptions {
  log?: Logger;
  /** Records held in memory while the database is unavailable (default 10,000). */
  maxPending?: number;
  /** How long one write waits for another program's lock before the record is queued (default 250 ms).
   * Kept short on purpose: record() runs on the agent's thread, which also carries live streams. */
  busyTimeoutMs?: number;
  /** Retry backoff while the database is unavailable (default 500 ms doubling to 30 s). */
  retryMinMs?: number;
  retryMaxMs?: number;
  /** Clock for today()/last(); tests pass a fixed one. */
  now?: () => number;
  /**
   * WAL checkpoints on a worker thread instead of on the thread that commits, while it writes
   * (checkpoint-handoff.ts): the agent sets this, so its event loop never waits for a checkpoint's fsyncs.
   * Off by default (one-shot commands and tests open many short-lived ledgers).
   */
  checkpointOffThread?: boolean | CheckpointHandoffOptions;
}

export interface LedgerHealth {
  ok: boolean;
  /** Records held in memory, not yet in the database. */
  pending: number;
  /** Records lost because the queue was full (since open). */
  dropped: number;
  /** Records refused because they were malformed (since open). */
  invalid: number;
  /** What is wrong and what to do, while not ok. */
  error?: string;
}

export interface PriceView {
  model: string;
  inputPerM: number;
  outputPerM: number;
  effectiveFrom: number;
}

/** The owner's electricity price: `perKwh` in `currency`; `usdPerUnit` converts it to USD (1 for USD). */
export interface ElectricityPrice {
  perKwh: number;
  currency: string;
  usdPerUnit: number;
}

interface Pending {
  rec: ValidRecord;
  /** Whether earnings were enabled when the request finished (null: not known yet, use the stored flag). */
  earningsOn: boolean | null;
  /** The network rates and electricity price in force when it finished. */
  rates: ReadonlyMap<string, Rate>;
  power: ElectricityPrice | null;
  /** false while its last message has not been handed to the hub (awaitingHub records). */
  delivered: boolean;
  /** Its row, once written (awaitingHub records only). */
  rowId?: number;
}

interface Connection {
  db: Database.Database;
  queries: UsageQueries;
  insert: Database.Statement;
  /** Inserts rows and marks earlier rows delivered, in one transaction. */
  insertMany: (items: readonly Pending[], marks?: readonly number[]) => void;
  insertPrice: Database.Statement;
  putSetting: Database.Statement;
}

const FLUSH_BATCH = 5000;
const CSV_PAGE = 5000;
const DROP_LOG_EVERY_MS = 10_000;

const INSERT_SQL = `INSERT INTO usage (request_id, source, model, endpoint, started_at, finished_at, tokens_in, tokens_out,
  estimated, latency_ms, ttft_ms, tokens_per_second, status, status_code, error, earnings, price_id,
  rate_in, rate_out, rate_source, energy_wh, cost, delivered)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const NO_RATES: ReadonlyMap<string, Rate> = new Map();
/** Rows awaiting delivery that are tracked in memory (the oldest are forgotten beyond this: they stay undelivered). */
const MAX_AWAITING = 10_000;
const NO_MARKS: readonly number[] = [];
const NO_ITEMS: readonly Pending[] = [];

function checkRange(from: number, to: number): void {
  if (!Number.isFinite(from) || !Number.isFinite(to) || from < 0) throw new LedgerValueError('invalid_range', `Invalid time range ${from}..${to}: use epoch milliseconds.`);
  if (to < from) throw new LedgerValueError('range_reversed', 'The end of the range is before its start.', 'to');
}

export class Ledger extends EventEmitter {
  private conn: Connection | null = null;
  private failure: DbFailure | null = null;
  private readonly queue: Ring<Pending>;
  private book = new PriceBook();
  /** null until read from the database (or set): held records then take the stored value when written. */
  private earningsOn: boolean | null = null;
  /** Set when the owner/agent changed the flag while the database was away: write it on reconnect. */
  private earningsUnsaved = false;
  private networkRates: ReadonlyMap<string, Rate> = NO_RATES;
  private power: ElectricityPrice | null = null;
  /** Records written (or held) as not yet delivered, by request id. */
  private readonly awaiting = new Map<string, Pending>();
  /** Row ids to mark delivered that the database could not take yet: written with the held rows on retry. */
  private marks: number[] = [];
  private dropped = 0;
  private droppedThisEpisode = 0;
  private lastDropLog = 0;
  private invalid = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay: number;
  private closed = false;
  private readonly log: Logger;
  private readonly busyTimeoutMs: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;
  private readonly now: () => number;
  private readonly checkpointOpts: CheckpointHandoffOptions | undefined;
  /** The connection's checkpoint thread, when checkpointOffThread. */
  private handoff?: CheckpointHandoff;
  private handoffEnded: Promise<void> = Promise.resolve();

  private constructor(
    readonly file: string,
    opts: LedgerOptions,
  ) {
    super();
    this.log = opts.log ?? memoryLog().child('ledger');
    this.queue = new Ring<Pending>(opts.maxPending ?? 10_000);
    this.busyTimeoutMs = opts.busyTimeoutMs ?? 250;
    this.retryMinMs = opts.retryMinMs ?? 500;
    this.retryMaxMs = opts.retryMaxMs ?? 30_000;
    this.retryDelay = this.retryMinMs;
    this.now = opts.now ?? Date.now;
    this.checkpointOpts = opts.checkpointOffThread === true ? {} : opts.checkpointOffThread || undefined;
  }

  /**
   * Opens (creating and migrating as needed) the ledger at `file`. Never throws for a bad file:
   * a ledger that cannot open starts degraded, holds records in memory and keeps retrying.
   */
  static open(file: string, opts: LedgerOptions = {}): Ledger {
    const ledger = new Ledger(path.resolve(file), opts);
    ledger.connect();
    return ledger;
  }

  // ---------- writing ----------

  /** Stores one finished request. Never throws; see health() for problems. */
  record(r: UsageRecord): void {
    try {
      const checked = validateRecord(r);
      if (!checked.ok) {
        this.invalid++;
        this.log.error(`Usage record refused (${checked.reason}); it was not stored.`, { requestId: (r as Partial<UsageRecord> | null)?.requestId });
        return;
      }
      const item = this.pending(checked.record);
      if (this.closed) {
        this.dropped++;
        this.log.error('Usage record arrived after the ledger was closed; it was not stored.', { requestId: item.rec.requestId });
        return;
      }
      if (this.conn && !this.failure && this.queue.size === 0) {
        if (this.insertNow([item])) return;
      }
      this.hold([item]);
    } catch (err) {
      // Last resort: nothing here may break the request path.
      this.log.error(`Usage record could not be handled: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Stores many records in one transaction (imports, benches). Never throws. */
  recordBatch(records: UsageRecord[]): void {
    const items: Pending[] = [];
    for (const r of records) {
      const checked = validateRecord(r);
      if (checked.ok) items.push(this.pending(checked.record));
      else {
        this.invalid++;
        this.log.error(`Usage record refused (${checked.reason}); it was not stored.`);
      }
    }
    if (items.length === 0 || this.closed) return;
    if (this.conn && !this.failure && this.queue.size === 0) {
      if (this.insertNow(items)) return;
    }
    this.hold(items);
  }

  /** Inserts rows now (one transaction); false after fail(). */
  private insertNow(items: Pending[]): boolean {
    const conn = this.conn as Connection;
    try {
      if (items.length === 1) this.insertRow(conn, items[0] as Pending);
      else conn.insertMany(items);
      this.handoff?.wrote();
      return true;
    } catch (err) {
      this.fail(err);
      return false;
    }
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
    if (!this.conn || this.failure || this.closed) {
      this.marks.push(...rows);
      this.scheduleRetry();
      return;
    }
    try {
      this.conn.insertMany(NO_ITEMS, rows);
    } catch (err) {
      this.marks.push(...rows);
      this.fail(err);
    }
  }

  private takeMarks(): readonly number[] {
    if (this.marks.length === 0) return NO_MARKS;
    const ids = this.marks;
    this.marks = [];
    return ids;
  }

  private pending(rec: ValidRecord): Pending {
    const item: Pending = { rec, earningsOn: this.earningsOn, rates: this.networkRates, power: this.power, delivered: rec.awaitingHub !== true };
    if (!item.delivered) {
      if (this.awaiting.size >= MAX_AWAITING) this.awaiting.delete(this.awaiting.keys().next().value as string);
      this.awaiting.set(rec.requestId, item);
    }
    return item;
  }

  health(): LedgerHealth {
    return {
      ok: this.failure === null && this.conn !== null,
      pending: this.queue.size,
      dropped: this.dropped,
      invalid: this.invalid,
      ...(this.failure ? { error: this.failure.message } : {}),
    };
  }

  // ---------- prices and earnings ----------

  /**
   * Adds a price row for `model` ('*' = every model without its own price), per 1M tokens, in force
   * from `at` (default now). Earlier prices stay: each request earns at the price in force when it
   * finished, and that amount is stored on its row when written. A price back-dated before rows
   * already written does not change them.
   */
  setPrice(model: string, inputPerM: number, outputPerM: number, at: number = this.now()): PriceView {
    if (typeof model !== 'string' || model.length === 0 || model.length > 256) throw new LedgerValueError('invalid_price', 'A price needs a model id (1-256 characters) or "*" for all models.', 'model');
    for (const [name, field, v] of [['input', 'inputPerM', inputPerM], ['output', 'outputPerM', outputPerM]] as const) {
      if (!Number.isFinite(v) || v < 0 || v > 1_000_000) throw new LedgerValueError('invalid_price', `The ${name} price must be a number from 0 to 1,000,000 per million tokens (got ${v}).`, field);
    }
    if (!Number.isInteger(at) || at < 0) throw new LedgerValueError('invalid_price', `The price start must be a time in epoch milliseconds (got ${at}).`, 'at');
    const conn = this.requireConn();
    const id = Number(conn.insertPrice.run(model, inputPerM, outputPerM, at, Date.now()).lastInsertRowid);
    const row: PriceRow = { id, model, inputPerM, outputPerM, effectiveFrom: at };
    this.book.add(row);
    this.log.info(`Price for ${model === '*' ? 'all models' : model} set to ${inputPerM} in / ${outputPerM} out per 1M tokens from ${new Date(at).toISOString()}.`);
    return { model, inputPerM, outputPerM, effectiveFrom: at };
  }

  /** Every price row ever set, oldest first. */
  prices(): PriceView[] {
    return this.book.all().map((p) => ({ model: p.model, inputPerM: p.inputPerM, outputPerM: p.outputPerM, effectiveFrom: p.effectiveFrom }));
  }

  /** The hub says whether this provider earns (provider/status → earnings_enabled). Applies to
   * requests finishing from now on; stored, so it survives a restart. */
  setEarningsEnabled(enabled: boolean): void {
    this.earningsOn = enabled;
    this.earningsUnsaved = true;
    this.saveEarningsFlag();
  }

  isEarningsEnabled(): boolean {
    return this.earningsOn ?? true;
  }

  /**
   * The network's payout rates per model (USD per 1M tokens), as last fetched from the platform.
   * Requests finishing from now on earn at these; a model missing here falls back to the owner's
   * own price. Kept in memory: the platform client restores its last good answer on start.
   */
  setNetworkRates(rates: ReadonlyMap<string, Rate>): void {
    this.networkRates = new Map(rates);
  }

  networkRateOf(model: string): Rate | undefined {
    return this.networkRates.get(model);
  }

  /** What a request finishing now earns: the amount its row is written with (the metrics count it as it ends). */
  earningOf(r: UsageRecord): number {
    return this.book.earningFor(r, this.earningsOn ?? true, this.networkRates).earnings;
  }

  /** The owner's electricity price (null: not set, power costs nothing here). Stored; applies to
   * requests finishing from now on. */
  setElectricityPrice(p: ElectricityPrice | null): void {
    if (p !== null) {
      if (!Number.isFinite(p.perKwh) || p.perKwh < 0 || p.perKwh > 100) throw new LedgerValueError('invalid_electricity_price', `The electricity price must be 0 to 100 per kWh (got ${p.perKwh}).`, 'perKwh');
      if (!/^[A-Z]{3}$/.test(p.currency)) throw new LedgerValueError('invalid_electricity_price', `The currency must be a three-letter code such as USD or EUR (got "${p.currency}").`, 'currency');
      if (!Number.isFinite(p.usdPerUnit) || p.usdPerUnit <= 0 || p.usdPerUnit > 100_000) throw new LedgerValueError('invalid_electricity_price', `The exchange rate to USD must be a positive number (got ${p.usdPerUnit}).`, 'usdPerUnit');
      if (p.currency === 'USD' && p.usdPerUnit !== 1) throw new LedgerValueError('invalid_electricity_price', 'For USD the exchange rate is 1.', 'usdPerUnit');
    }
    const conn = this.requireConn();
    conn.putSetting.run('electricity', JSON.stringify(p));
    this.power = p === null ? null : { perKwh: p.perKwh, currency: p.currency, usdPerUnit: p.usdPerUnit };
    this.log.info(p === null ? 'Electricity price cleared: power cost is no longer counted.' : `Electricity price set to ${p.perKwh} ${p.currency} per kWh.`);
  }

  electricityPrice(): ElectricityPrice | null {
    return this.power;
  }

  // ---------- queries (throw LedgerUnavailableError with owner-facing text when the file is unreadable) ----------

  totals(from: number, to: number): UsageTotals {
    checkRange(from, to);
    return this.read((q) => q.totals(from, to));
  }

  report(from: number, to: number, bucket: BucketSize): UsageReport {
    checkRange(from, to);
    return this.read((q) => q.report(from, to, bucket));
  }

  /** Since local midnight. For status displays: zeros (never an exception) while the database
   * cannot be read; health() says why. */
  today(): UsageTotals {
    const now = this.now();
    return this.statusTotals(startOfLocalDay(now), now + 1);
  }

  /** The last `days` × 24 hours up to now; zeros while the database cannot be read, like today(). */
  last(days: number): UsageTotals {
    const now = this.now();
    return this.statusTotals(Math.max(0, now - days * DAY_MS), now + 1);
  }

  private statusTotals(from: number, to: number): UsageTotals {
    try {
      return this.totals(from, to);
    } catch (err) {
      if (!(err instanceof LedgerUnavailableError)) throw err;
      return emptyTotals();
    }
  }

  /** What this ledger holds of hub traffic over its whole life (for comparing with the platform's record). */
  hubLifetime(): HubLifetime {
    return this.read((q) => q.hubLifetime());
  }

  topModels(from: number, to: number, n: number): ModelUsage[] {
    checkRange(from, to);
    return this.read((q) => q.perModel(from, to)).slice(0, Math.max(0, n));
  }

  /** The newest records, newest first. */
  recent(limit: number): UsageRecord[] {
    const n = Math.min(10_000, Math.max(1, Math.floor(limit)));
    return this.read((q) => q.recent(n));
  }

  exportCsv(from: number, to: number): string {
    checkRange(from, to);
    return this.read((q) => {
      const parts = [csvHeaderLine()];
      let after: Cursor | null = null;
      for (;;) {
        const page = q.csvPage(from, to, after, CSV_PAGE);
        for (const r of page) parts.push(csvLine(r));
        if (page.length < CSV_PAGE) break;
        const last = page[page.length - 1]!;
        after = { finishedAt: last.finished_at, id: last.id };
      }
      return parts.join('');
    });
  }

  /** Writes the CSV of [from, to) to `stream` page by page, honouring backpressure. Does not end
   * the stream. Resolves with the number of records written. */
  async exportCsvTo(stream: WritableLike, from: number, to: number): Promise<number> {
    checkRange(from, to);
    let rows = 0;
    let after: Cursor | null = null;
    if (!stream.write(csvHeaderLine())) await waitForDrain(stream);
    for (;;) {
      const cursor: Cursor | null = after;
      const page: CsvPageRow[] = this.read((q) => q.csvPage(from, to, cursor, CSV_PAGE));
      if (page.length > 0 && !stream.write(page.map(csvLine).join(''))) await waitForDrain(stream);
      rows += page.length;
      if (page.length < CSV_PAGE) return rows;
      const last: CsvPageRow = page[page.length - 1]!;
      after = { finishedAt: last.finished_at, id: last.id };
    }
  }

  // ---------- maintenance ----------

  /**
   * Deletes records that finished more than `retentionDays` ago (cut at a 15-minute edge so the
   * rollups stay exact). 0 or less keeps everything. Works oldest first in short transactions, each
   * leaving records and rollups consistent. Returns the number of records deleted.
   */
  prune(retentionDays: number): number {
    if (!Number.isFinite(retentionDays)) throw new LedgerValueError('invalid_retention', `Retention must be a number of days (got ${retentionDays}).`);
    if (retentionDays <= 0) return 0;
    const cutoff = Math.floor((this.now() - retentionDays * DAY_MS) / ROLLUP_MS) * ROLLUP_MS;
    const conn = this.requireConn();
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
    const step = conn.db.transaction((upTo: number) => {
      const n = delRows.run(upTo).changes;
      delRollups.run(upTo);
      delDays.run(upTo);
      const day = upTo - (upTo % ROLLUP_DAY_MS);
      if (day < upTo) redoDay.run({ day });
      return n;
    });
    let deleted = 0;
    try {
      for (;;) {
        const row = nth.get(cutoff, 20_000) as { t: number } | undefined;
        const upTo = row ? Math.min(cutoff, Math.ceil((row.t + 1) / ROLLUP_MS) * ROLLUP_MS) : cutoff;
        deleted += step(upTo);
        if (upTo >= cutoff) break;
      }
    } catch (err) {
      this.fail(err);
      throw new LedgerUnavailableError(this.failure?.kind ?? 'unavailable', this.failure?.message ?? String(err));
    }
    if (deleted > 0) this.log.info(`Removed ${deleted} usage records older than ${retentionDays} days.`);
    return deleted;
  }

  /** SQLite's quick_check: 'ok' or the problems found. */
  integrityCheck(): string {
    return this.read(() => {
      const rows = this.conn!.db.pragma('quick_check') as Array<{ quick_check: string }>;
      return rows.map((r) => r.quick_check).join('\n');
    });
  }

  /** Who checkpoints the WAL now: the checkpoint thread, or the connection that commits (SQLite's default). */
  get checkpoints(): 'thread' | 'connection' {
    return this.handoff?.mode ?? 'connection';
  }

  /** Resolves once the checkpoint thread of the last connection has ended (at once without one). */
  threadEnded(): Promise<void> {
    return this.handoffEnded;
  }

  /** Writes what it can of the queue, stops retrying and closes the file. */
  close(): void {
    if (this.closed) return;
    if ((this.queue.size > 0 || this.marks.length > 0) && this.conn) this.flush();
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.queue.size > 0) {
      this.log.error(`The ledger closed with ${this.queue.size} usage records it could not write; they are lost. ${this.failure?.message ?? ''}`.trim());
    }
    this.closeConn();
  }

  // ---------- internals ----------

  private connect(): boolean {
    let db: Database.Database | undefined;
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      // Created 0600 before SQLite opens it: its -wal and -shm files take the database file's mode.
      fs.closeSync(fs.openSync(this.file, 'a', 0o600));
      db = new Database(this.file, { timeout: this.busyTimeoutMs });
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') this.log.warn(`The usage database could not switch to WAL mode (it uses ${String(mode)}); writes are still safe but slower.`);
      db.pragma('synchronous = NORMAL');
      db.pragma('journal_size_limit = 67108864');
      if (this.failure?.kind === 'corrupt') {
        // Opening only reads the header; after damage was seen, look at every page before trusting the file again.
        const check = String(db.pragma('quick_check', { simple: true }));
        if (check !== 'ok') throw Object.assign(new Error(`integrity check failed: ${check.split('\n')[0]}`), { code: 'SQLITE_CORRUPT' });
      }
      const applied = migrate(db);
      if (applied.length > 0) {
        // A new file runs every step from the first: it was created, not upgraded.
        const latest = applied[applied.length - 1];
        this.log.info(applied[0] === 1 ? `Usage database ${this.file} created (schema v${latest}).` : `Usage database ${this.file} upgraded to schema v${latest}.`);
      }
      const open = db;
      const insert = open.prepare(INSERT_SQL);
      const conn: Connection = {
        db: open,
        queries: new UsageQueries(open),
        insert,
        insertMany: (() => {
          const mark = open.prepare('UPDATE usage SET delivered = 1 WHERE id = ?');
          return open.transaction((items: readonly Pending[], marks: readonly number[] = NO_MARKS) => {
            for (const it of items) this.insertRow(conn, it);
            for (const id of marks) mark.run(id);
          });
        })(),
        insertPrice: open.prepare('INSERT INTO prices (model, input_per_m, output_per_m, effective_from, created_at) VALUES (?, ?, ?, ?, ?)'),
        putSetting: open.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      };
      const prices = open
        .prepare('SELECT id, model, input_per_m AS inputPerM, output_per_m AS outputPerM, effective_from AS effectiveFrom FROM prices')
        .all() as PriceRow[];
      this.book = new PriceBook(prices);
      const flag = open.prepare("SELECT value FROM settings WHERE key = 'earnings_enabled'").get() as { value: string } | undefined;
      const power = open.prepare("SELECT value FROM settings WHERE key = 'electricity'").get() as { value: string } | undefined;
      this.power = parseElectricity(power?.value);
      this.conn = conn;
      if (this.checkpointOpts) this.handOffCheckpoints(conn, this.checkpointOpts);
      if (this.earningsUnsaved) this.saveEarningsFlag();
      else this.earningsOn = flag ? flag.value === '1' : true;
      return true;
    } catch (err) {
      try {
        db?.close();
      } catch {
        // the handle is unusable anyway
      }
      this.conn = null;
      this.fail(err);
      return false;
    }
  }

  private insertRow(conn: Connection, item: Pending): void {
    const { rec, earningsOn, rates, power } = item;
    const e = this.book.earningFor(rec, earningsOn ?? this.earningsOn ?? true, rates);
    const energy = rec.energyWh ?? null;
    const cost = energy !== null && power ? (energy / 1000) * power.perKwh * power.usdPerUnit : null;
    const info = conn.insert.run(
      rec.requestId,
      rec.source,
      rec.model,
      rec.endpoint,
      rec.startedAt,
      rec.finishedAt,
      rec.tokensIn,
      rec.tokensOut,
      rec.estimated ? 1 : 0,
      rec.latencyMs,
      rec.ttftMs,
      rec.tokensPerSecond,
      rec.status,
      rec.statusCode,
      rec.error,
      e.earnings,
      e.priceId,
      e.rate?.inputPerM ?? null,
      e.rate?.outputPerM ?? null,
      e.source,
      energy,
      cost,
      item.delivered ? 1 : 0,
    );
    if (!item.delivered) item.rowId = Number(info.lastInsertRowid);
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
            `(${this.droppedThisEpisode} so far). ${this.failure?.message ?? ''}`.trim(),
        );
        this.emit('health', this.health());
      }
    }
    this.scheduleRetry();
  }

  private fail(err: unknown): void {
    const f = describeDbFailure(this.file, err);
    const changed = !this.failure || this.failure.kind !== f.kind || this.failure.detail !== f.detail;
    this.failure = f;
    if (f.reopen) this.closeConn();
    if (changed) {
      this.log.error(f.message, { detail: f.detail, pending: this.queue.size });
      this.emit('health', this.health());
    }
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer || this.closed || (!this.failure && this.queue.size === 0 && this.marks.length === 0)) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(this.retryMaxMs, this.retryDelay * 2);
    this.retryTimer = setTimeout(() => this.retry(), delay);
    this.retryTimer.unref();
  }

  private retry(): void {
    this.retryTimer = null;
    if (this.closed) return;
    if (!this.conn && !this.connect()) return; // connect() failed and rescheduled
    const held = this.queue.size;
    if (!this.flush()) return; // flush() failed and rescheduled
    const wasFailing = this.failure !== null;
    this.failure = null;
    this.retryDelay = this.retryMinMs;
    if (wasFailing || held > 0) {
      const lost = this.droppedThisEpisode > 0 ? ` ${this.droppedThisEpisode} records were dropped while it was away.` : '';
      this.log.info(`The usage database ${this.file} is working again; wrote ${held} held records.${lost}`);
      this.droppedThisEpisode = 0;
      this.emit('health', this.health());
    }
  }

  /** Writes the queue in batches; false (after fail()) when the database refused. */
  private flush(): boolean {
    const conn = this.conn;
    if (!conn) return false;
    // Delivered marks kept while the database was away go with the first batch (or alone when none is held).
    let marks = this.takeMarks();
    try {
      while (this.queue.size > 0) {
        const batch = this.queue.peek(FLUSH_BATCH);
        conn.insertMany(batch, marks);
        marks = NO_MARKS;
        this.queue.drop(batch.length);
      }
      if (marks.length > 0) conn.insertMany(NO_ITEMS, marks);
      this.handoff?.wrote();
      return true;
    } catch (err) {
      for (const it of this.queue.peek(FLUSH_BATCH)) it.rowId = undefined; // rolled back
      this.marks.push(...marks);
      this.fail(err);
      return false;
    }
  }

  private saveEarningsFlag(): void {
    if (!this.conn || this.failure) return;
    try {
      this.conn.putSetting.run('earnings_enabled', this.earningsOn ? '1' : '0');
      this.earningsUnsaved = false;
    } catch (err) {
      this.log.warn(`Could not store the earnings setting yet (${err instanceof Error ? err.message : String(err)}); it is kept in memory and stored when the database is back.`);
    }
  }

  private requireConn(): Connection {
    if (this.closed) throw new LedgerUnavailableError('closed', 'The usage ledger is closed.');
    if (!this.conn) throw new LedgerUnavailableError(this.failure?.kind ?? 'unavailable', this.failure?.message ?? `The usage database ${this.file} is not open.`);
    return this.conn;
  }

  private read<T>(fn: (q: UsageQueries) => T): T {
    const conn = this.requireConn();
    try {
      return fn(conn.queries);
    } catch (err) {
      // A refused value is the caller's, not the database's (RangeError: better-sqlite3's for a bad binding).
      if (err instanceof LedgerValueError || err instanceof RangeError) throw err;
      const f = describeDbFailure(this.file, err);
      if (f.reopen) this.fail(err);
      throw new LedgerUnavailableError(f.kind, f.message);
    }
  }

  /** This connection's checkpoints go to a worker thread while it writes (checkpoint-handoff.ts). */
  private handOffCheckpoints(conn: Connection, opts: CheckpointHandoffOptions): void {
    const handoff = new CheckpointHandoff(
      this.file,
      (pages) => {
        if (this.conn !== conn) return;
        try {
          conn.db.pragma(`wal_autocheckpoint = ${pages}`);
        } catch (err) {
          this.fail(err);
        }
      },
      this.log,
      opts,
    );
    handoff.on('mode', (mode) => this.emit('checkpoints', mode));
    handoff.on('checkpoint', (report) => this.emit('checkpoint', report));
    this.handoff = handoff;
  }

  private closeConn(): void {
    const handoff = this.handoff;
    this.handoff = undefined;
    if (handoff) {
      handoff.removeAllListeners();
      // The worker's last checkpoint and close may come after this connection's: SQLite's last close checkpoints.
      this.handoffEnded = handoff.end();
    }
    const conn = this.conn;
    this.conn = null;
    if (!conn) return;
    try {
      conn.db.close();
    } catch (err) {
      this.log.warn(`Closing the usage database failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function parseElectricity(text: string | undefined): ElectricityPrice | null {
  if (!text) return null;
  try {
    const v = JSON.parse(text) as Partial<ElectricityPrice> | null;
    if (!v || typeof v.perKwh !== 'number' || typeof v.currency !== 'string' || typeof v.usdPerUnit !== 'number') return null;
    return { perKwh: v.perKwh, currency: v.currency, usdPerUnit: v.usdPerUnit };
  } catch {
    return null;
  }
}
