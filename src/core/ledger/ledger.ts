// The usage and earnings ledger: one SQLite row per finished request, in the home folder. This is its one
// way in; each concern lives in its own part: the file and its connection (store.ts), writes and retries
// (writer.ts), what rows are priced with (stored-settings.ts), what is asked of it (reader.ts over
// queries.ts), and retention and checks (maintenance.ts). README.md in this folder says what is promised.
import { EventEmitter } from 'node:events';
import path from 'node:path';
import type { ModelUsage, RailEventView, RailSpanSummary, UsageReport } from '../../shared/views/usage';
import type { UsageRecord, UsageTotals } from '../../shared/types';
import { memoryLog, type Logger } from '../base/log';
import type { CheckpointHandoffOptions } from './checkpoint-handoff';
import type { DbFailureKind } from './db-errors';
import { LedgerMaintenance } from './maintenance';
import type { Rate } from './price-book';
import type { RailEvent } from './rail-events';
import type { HubLifetime } from './queries';
import { LedgerReader } from './reader';
import { SpaceReserve } from './space-reserve';
import { LedgerStore } from './store';
import { LedgerSettings, type ElectricityPrice, type PriceView } from './stored-settings';
import type { BucketSize } from './time-buckets';
import type { WritableLike } from './write-stream';
import { LedgerWriter } from './writer';

export type { ElectricityPrice, PriceView } from './stored-settings';

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
  /**
   * Space kept in reserve on the ledger's disk, released when the disk fills so rows the hub was told about
   * are still written (space-reserve.ts). The agent sets this; off by default.
   */
  reserve?: { file: string; bytes: number };
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
  /** What kind of failure, while not ok (`full` and `read_only` are the disk's). */
  kind?: DbFailureKind;
}

export class Ledger extends EventEmitter {
  private readonly store: LedgerStore;
  private readonly settings: LedgerSettings;
  private readonly writer: LedgerWriter;
  private readonly reader: LedgerReader;
  private readonly maintenance: LedgerMaintenance;
  private readonly reserve?: SpaceReserve;

  private constructor(
    readonly file: string,
    opts: LedgerOptions,
  ) {
    super();
    const log = opts.log ?? memoryLog().child('ledger');
    const now = opts.now ?? Date.now;
    const checkpointOffThread = opts.checkpointOffThread === true ? {} : opts.checkpointOffThread || undefined;
    this.store = new LedgerStore(file, { log, busyTimeoutMs: opts.busyTimeoutMs ?? 250, ...(checkpointOffThread ? { checkpointOffThread } : {}) });
    this.settings = new LedgerSettings(this.store, log, now);
    const reserve = (this.reserve = opts.reserve ? new SpaceReserve(opts.reserve.file, { bytes: opts.reserve.bytes, log }) : undefined);
    this.writer = new LedgerWriter(
      this.store,
      this.settings,
      log,
      {
        maxPending: opts.maxPending ?? 10_000,
        retryMinMs: opts.retryMinMs ?? 500,
        retryMaxMs: opts.retryMaxMs ?? 30_000,
        ...(reserve ? { freeSpace: () => reserve.release(), recovered: () => reserve.ensure() } : {}),
      },
      () => this.emit('health', this.health()),
    );
    this.reader = new LedgerReader(this.store, now);
    this.maintenance = new LedgerMaintenance(this.store, log, now);
    this.store.on('failure', (f, changed) => {
      if (!changed) return;
      log.error(f.message, { code: `ledger_${f.kind}`, detail: f.detail, pending: this.writer.pending });
      this.emit('health', this.health());
    });
    this.store.on('checkpoints', (mode) => this.emit('checkpoints', mode));
    this.store.on('checkpoint', (report) => this.emit('checkpoint', report));
  }

  /**
   * Opens (creating and migrating as needed) the ledger at `file`. Never throws for a bad file:
   * a ledger that cannot open starts degraded, holds records in memory and keeps retrying.
   */
  static open(file: string, opts: LedgerOptions = {}): Ledger {
    const ledger = new Ledger(path.resolve(file), opts);
    ledger.store.connect();
    ledger.reserve?.ensure();
    return ledger;
  }

  // ---------- writing (writer.ts) ----------

  /** Stores one finished request. Never throws; see health() for problems. */
  record(r: UsageRecord): void {
    this.writer.record(r);
  }

  /** Stores one decision of the guard rails or the pause controller (rail_events). Never throws, never waits. */
  recordRail(e: RailEvent): void {
    this.writer.recordRail(e);
  }

  /** Stores many records in one transaction (imports, benches). Never throws. */
  recordBatch(records: UsageRecord[]): void {
    this.writer.recordBatch(records);
  }

  /** The last messages of these awaitingHub records were handed to the hub link: their rows become delivered. */
  markDelivered(...requestIds: string[]): void {
    this.writer.markDelivered(...requestIds);
  }

  health(): LedgerHealth {
    const failure = this.store.failure;
    return {
      ok: failure === null && this.store.conn !== null,
      pending: this.writer.pending,
      dropped: this.writer.dropped,
      invalid: this.writer.invalid,
      ...(failure ? { error: failure.message, kind: failure.kind } : {}),
    };
  }

  // ---------- prices and earnings (stored-settings.ts) ----------

  setPrice(model: string, inputPerM: number, outputPerM: number, at?: number): PriceView {
    return this.settings.setPrice(model, inputPerM, outputPerM, at);
  }

  prices(): PriceView[] {
    return this.settings.prices();
  }

  setEarningsEnabled(enabled: boolean): void {
    this.settings.setEarningsEnabled(enabled);
  }

  isEarningsEnabled(): boolean {
    return this.settings.isEarningsEnabled();
  }

  setNetworkRates(rates: ReadonlyMap<string, Rate>): void {
    this.settings.setNetworkRates(rates);
  }

  networkRateOf(model: string): Rate | undefined {
    return this.settings.networkRateOf(model);
  }

  /** What a request finishing now earns: the amount its row is written with (the metrics count it as it ends). */
  earningOf(r: UsageRecord): number {
    return this.settings.earningOf(r);
  }

  setElectricityPrice(p: ElectricityPrice | null): void {
    this.settings.setElectricityPrice(p);
  }

  electricityPrice(): ElectricityPrice | null {
    return this.settings.electricityPrice();
  }

  // ---------- queries (reader.ts) ----------

  totals(from: number, to: number): UsageTotals {
    return this.reader.totals(from, to);
  }

  report(from: number, to: number, bucket: BucketSize): UsageReport {
    return this.reader.report(from, to, bucket);
  }

  today(): UsageTotals {
    return this.reader.today();
  }

  last(days: number): UsageTotals {
    return this.reader.last(days);
  }

  hubLifetime(): HubLifetime {
    return this.reader.hubLifetime();
  }

  topModels(from: number, to: number, n: number): ModelUsage[] {
    return this.reader.topModels(from, to, n);
  }

  recent(limit: number): UsageRecord[] {
    return this.reader.recent(limit);
  }

  /** The time paused and throttled in [from, to) by cause, from the rails' decisions (an open span ends now). */
  railSummary(from: number, to: number): RailSpanSummary {
    return this.reader.railSummary(from, to);
  }

  /** railSummary with what the pauses cost (declined requests counted; the rest estimated, or unknown). */
  railSummaryWithCost(from: number, to: number): RailSpanSummary {
    return this.reader.railSummaryWithCost(from, to);
  }

  /** The latest rail decisions, newest first. */
  recentRails(limit: number): RailEventView[] {
    return this.reader.recentRails(limit);
  }

  exportCsv(from: number, to: number): string {
    return this.reader.exportCsv(from, to);
  }

  exportCsvTo(stream: WritableLike, from: number, to: number): Promise<number> {
    return this.reader.exportCsvTo(stream, from, to);
  }

  // ---------- maintenance (maintenance.ts) ----------

  prune(retentionDays: number): number {
    return this.maintenance.prune(retentionDays);
  }

  integrityCheck(): string {
    return this.maintenance.integrityCheck();
  }

  /** Who checkpoints the WAL now: the checkpoint thread, or the connection that commits (SQLite's default). */
  get checkpoints(): 'thread' | 'connection' {
    return this.store.checkpoints;
  }

  /** Resolves once the checkpoint thread of the last connection has ended (at once without one). */
  threadEnded(): Promise<void> {
    return this.store.threadEnded();
  }

  /** Writes what it can of the queue, stops retrying and closes the file. */
  close(): void {
    if (this.store.closed) return;
    this.writer.flushHeld();
    this.store.closed = true;
    this.writer.close();
    this.store.closeConn();
  }
}
