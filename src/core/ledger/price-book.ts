// Price history in memory: which price was in force for a model at a given time, and what a
// finished request earned under it. The rows live in the `prices` table; a change is a new row
// with its own effective_from, never an edit, so every past price stays visible.

export interface PriceRow {
  id: number;
  /** A model id, or '*' for every model without a price of its own. */
  model: string;
  inputPerM: number;
  outputPerM: number;
  effectiveFrom: number; // epoch ms
}

/** A payout rate, USD per 1M tokens. */
export interface Rate {
  inputPerM: number;
  outputPerM: number;
}

export type RateSource = 'network' | 'override';

export interface Earning {
  earnings: number;
  priceId: number | null;
  /** The rate the request earned at, and where it came from; null when nothing priced it. */
  rate: Rate | null;
  source: RateSource | null;
}

const NOTHING: Earning = { earnings: 0, priceId: null, rate: null, source: null };

export class PriceBook {
  private readonly byModel = new Map<string, PriceRow[]>();

  constructor(rows: PriceRow[] = []) {
    for (const r of rows) this.add(r);
  }

  add(row: PriceRow): void {
    const list = this.byModel.get(row.model) ?? [];
    list.push(row);
    // Later effective_from wins; for the same instant, the row written last wins.
    list.sort((a, b) => a.effectiveFrom - b.effectiveFrom || a.id - b.id);
    this.byModel.set(row.model, list);
  }

  all(): PriceRow[] {
    return [...this.byModel.values()].flat().sort((a, b) => a.effectiveFrom - b.effectiveFrom || a.id - b.id);
  }

  /** The price in force for `model` at `at`: the model's own price, else the '*' price. */
  priceAt(model: string, at: number): PriceRow | undefined {
    return inForce(this.byModel.get(model), at) ?? inForce(this.byModel.get('*'), at);
  }

  /**
   * What one finished request earned. Only successful requests from the hub earn: the owner's own
   * use through the local gateway is free, and failed, cancelled or rejected requests are not paid.
   * The network's payout rate for the model wins; the owner's own price (the model's, else '*') is
   * only an override for a model the network does not price.
   */
  earningFor(
    r: { source: string; status: string; model: string; finishedAt: number; tokensIn: number; tokensOut: number },
    enabled: boolean,
    network?: ReadonlyMap<string, Rate>,
  ): Earning {
    if (!enabled || r.source !== 'hub' || r.status !== 'ok') return NOTHING;
    const net = network?.get(r.model);
    if (net) return { earnings: (r.tokensIn * net.inputPerM + r.tokensOut * net.outputPerM) / 1_000_000, priceId: null, rate: net, source: 'network' };
    const price = this.priceAt(r.model, r.finishedAt);
    if (!price) return NOTHING;
    return {
      earnings: (r.tokensIn * price.inputPerM + r.tokensOut * price.outputPerM) / 1_000_000,
      priceId: price.id,
      rate: { inputPerM: price.inputPerM, outputPerM: price.outputPerM },
      source: 'override',
    };
  }
}

function inForce(list: PriceRow[] | undefined, at: number): PriceRow | undefined {
  if (!list) return undefined;
  for (let i = list.length - 1; i >= 0; i--) {
    const row = list[i]!;
    if (row.effectiveFrom <= at) return row;
  }
  return undefined;
}
