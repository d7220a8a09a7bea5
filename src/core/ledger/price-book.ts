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

export interface Earning {
  earnings: number;
  priceId: number | null;
}

const NOTHING: Earning = { earnings: 0, priceId: null };

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
   */
  earningFor(r: { source: string; status: string; model: string; finishedAt: number; tokensIn: number; tokensOut: number }, enabled: boolean): Earning {
    if (!enabled || r.source !== 'hub' || r.status !== 'ok') return NOTHING;
    const price = this.priceAt(r.model, r.finishedAt);
    if (!price) return NOTHING;
    return { earnings: (r.tokensIn * price.inputPerM + r.tokensOut * price.outputPerM) / 1_000_000, priceId: price.id };
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
