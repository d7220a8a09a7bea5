// What the ledger keeps beside the rows and prices each row as it is written with: the owner's price
// history (`prices`), whether the provider earns (the hub's earnings_enabled), the owner's electricity
// price (both in `settings`), and the network's payout rates (in memory: the platform client restores its
// last good answer on start). A record is priced with the values in force when it finished.
import type Database from 'better-sqlite3';
import type { UsageRecord } from '../../shared/types';
import type { Logger } from '../base/log';
import { LedgerValueError } from './db-errors';
import { PriceBook, type Earning, type PriceRow, type Rate } from './price-book';
import type { Connection, LedgerStore } from './store';

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

/** What a record is priced with: the values in force when it finished (held records keep theirs). */
export interface PricingAt {
  /** Whether earnings were enabled (null: not known yet, use the stored flag when written). */
  earningsOn: boolean | null;
  rates: ReadonlyMap<string, Rate>;
  power: ElectricityPrice | null;
}

const NO_RATES: ReadonlyMap<string, Rate> = new Map();

interface Statements {
  insertPrice: Database.Statement;
  putSetting: Database.Statement;
}

export class LedgerSettings {
  private book = new PriceBook();
  /** null until read from the database (or set): held records then take the stored value when written. */
  private earningsOn: boolean | null = null;
  /** Set when the owner/agent changed the flag while the database was away: written on reconnect. */
  private earningsUnsaved = false;
  private networkRates: ReadonlyMap<string, Rate> = NO_RATES;
  private power: ElectricityPrice | null = null;
  private st: Statements | null = null;

  constructor(
    private readonly store: LedgerStore,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    store.on('open', (conn) => this.load(conn));
  }

  /** The values a record finishing now is priced with. */
  current(): PricingAt {
    return { earningsOn: this.earningsOn, rates: this.networkRates, power: this.power };
  }

  /** What a record earns and costs under `at` (its row is written with these). */
  price(rec: UsageRecord, at: PricingAt): { earning: Earning; cost: number | null } {
    const earning = this.book.earningFor(rec, at.earningsOn ?? this.earningsOn ?? true, at.rates);
    const energy = rec.energyWh ?? null;
    const cost = energy !== null && at.power ? (energy / 1000) * at.power.perKwh * at.power.usdPerUnit : null;
    return { earning, cost };
  }

  /**
   * Adds a price row for `model` ('*' = every model without its own price), per 1M tokens, in force
   * from `at` (default now). Earlier prices stay: each request earns at the price in force when it
   * finished, and that amount is stored on its row when written. A price back-dated before rows
   * already written does not change them.
   */
  setPrice(model: string, inputPerM: number, outputPerM: number, at: number = this.now()): PriceView {
    if (typeof model !== 'string' || model.length === 0 || model.length > 256)
      throw new LedgerValueError('invalid_price', 'A price needs a model id (1-256 characters) or "*" for all models.', 'model');
    for (const [name, field, v] of [
      ['input', 'inputPerM', inputPerM],
      ['output', 'outputPerM', outputPerM],
    ] as const) {
      if (!Number.isFinite(v) || v < 0 || v > 1_000_000)
        throw new LedgerValueError('invalid_price', `The ${name} price must be a number from 0 to 1,000,000 per million tokens (got ${v}).`, field);
    }
    if (!Number.isInteger(at) || at < 0) throw new LedgerValueError('invalid_price', `The price start must be a time in epoch milliseconds (got ${at}).`, 'at');
    const st = this.statements();
    const id = Number(st.insertPrice.run(model, inputPerM, outputPerM, at, Date.now()).lastInsertRowid);
    const row: PriceRow = { id, model, inputPerM, outputPerM, effectiveFrom: at };
    this.book.add(row);
    this.log.info(
      `Price for ${model === '*' ? 'all models' : model} set to ${inputPerM} in / ${outputPerM} out per 1M tokens from ${new Date(at).toISOString()}.`,
    );
    return { model, inputPerM, outputPerM, effectiveFrom: at };
  }

  /** Every price row ever set, oldest first. */
  prices(): PriceView[] {
    return this.book.all().map((p) => ({ model: p.model, inputPerM: p.inputPerM, outputPerM: p.outputPerM, effectiveFrom: p.effectiveFrom }));
  }

  /** The hub says whether this provider earns (provider/status → earnings_enabled). Applies to requests
   * finishing from now on; stored, so it survives a restart. */
  setEarningsEnabled(enabled: boolean): void {
    this.earningsOn = enabled;
    this.earningsUnsaved = true;
    this.saveEarningsFlag();
  }

  isEarningsEnabled(): boolean {
    return this.earningsOn ?? true;
  }

  /** The network's payout rates per model (USD per 1M tokens), as last fetched from the platform. Requests
   * finishing from now on earn at these; a model missing here falls back to the owner's own price. */
  setNetworkRates(rates: ReadonlyMap<string, Rate>): void {
    this.networkRates = new Map(rates);
  }

  networkRateOf(model: string): Rate | undefined {
    return this.networkRates.get(model);
  }

  /** What a request finishing now earns: the amount its row is written with. */
  earningOf(r: UsageRecord): number {
    return this.book.earningFor(r, this.earningsOn ?? true, this.networkRates).earnings;
  }

  /** The owner's electricity price (null: not set, power costs nothing here). Stored; applies to requests
   * finishing from now on. */
  setElectricityPrice(p: ElectricityPrice | null): void {
    if (p !== null) {
      if (!Number.isFinite(p.perKwh) || p.perKwh < 0 || p.perKwh > 100)
        throw new LedgerValueError('invalid_electricity_price', `The electricity price must be 0 to 100 per kWh (got ${p.perKwh}).`, 'perKwh');
      if (!/^[A-Z]{3}$/.test(p.currency))
        throw new LedgerValueError(
          'invalid_electricity_price',
          `The currency must be a three-letter code such as USD or EUR (got "${p.currency}").`,
          'currency',
        );
      if (!Number.isFinite(p.usdPerUnit) || p.usdPerUnit <= 0 || p.usdPerUnit > 100_000)
        throw new LedgerValueError('invalid_electricity_price', `The exchange rate to USD must be a positive number (got ${p.usdPerUnit}).`, 'usdPerUnit');
      if (p.currency === 'USD' && p.usdPerUnit !== 1) throw new LedgerValueError('invalid_electricity_price', 'For USD the exchange rate is 1.', 'usdPerUnit');
    }
    this.statements().putSetting.run('electricity', JSON.stringify(p));
    this.power = p === null ? null : { perKwh: p.perKwh, currency: p.currency, usdPerUnit: p.usdPerUnit };
    this.log.info(p === null ? 'Electricity price cleared: power cost is no longer counted.' : `Electricity price set to ${p.perKwh} ${p.currency} per kWh.`);
  }

  electricityPrice(): ElectricityPrice | null {
    return this.power;
  }

  /** Reads what is stored, on each (re)opened connection; writes a flag set while the file was away. */
  private load(conn: Connection): void {
    const db = conn.db;
    this.st = {
      insertPrice: db.prepare('INSERT INTO prices (model, input_per_m, output_per_m, effective_from, created_at) VALUES (?, ?, ?, ?, ?)'),
      putSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    };
    const prices = db
      .prepare('SELECT id, model, input_per_m AS inputPerM, output_per_m AS outputPerM, effective_from AS effectiveFrom FROM prices')
      .all() as PriceRow[];
    this.book = new PriceBook(prices);
    const flag = db.prepare("SELECT value FROM settings WHERE key = 'earnings_enabled'").get() as { value: string } | undefined;
    const power = db.prepare("SELECT value FROM settings WHERE key = 'electricity'").get() as { value: string } | undefined;
    this.power = parseElectricity(power?.value);
    if (this.earningsUnsaved) this.saveEarningsFlag();
    else this.earningsOn = flag ? flag.value === '1' : true;
  }

  private statements(): Statements {
    this.store.requireConn();
    if (!this.st) throw new Error('the ledger settings were read before the database opened');
    return this.st;
  }

  private saveEarningsFlag(): void {
    if (!this.store.usable || !this.st) return;
    try {
      this.st.putSetting.run('earnings_enabled', this.earningsOn ? '1' : '0');
      this.earningsUnsaved = false;
    } catch (err) {
      this.log.warn(
        `Could not store the earnings setting yet (${err instanceof Error ? err.message : String(err)}); it is kept in memory and stored when the database is back.`,
      );
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
