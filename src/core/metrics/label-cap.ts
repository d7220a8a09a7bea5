// A label's values, bounded: every new value a series label takes makes new series in every scraper's
// database, and a model name comes from outside (the hub names the model of each request, an owner may
// rename models at will). The first `max` distinct values are kept as they are; later ones are counted
// under OTHER_LABEL, so a flood of odd names costs one series, not thousands.

/** The value that stands for every value past the cap. */
export const OTHER_LABEL = 'other';

/** Longest label value kept (longer ones are cut). */
const MAX_VALUE_CHARS = 128;

export class LabelCap {
  private readonly seen = new Set<string>();

  constructor(readonly max: number) {}

  /** The label value to use for `value`. */
  of(value: string): string {
    const v = value.length > MAX_VALUE_CHARS ? value.slice(0, MAX_VALUE_CHARS) : value;
    if (this.seen.has(v)) return v;
    if (this.seen.size >= this.max) return OTHER_LABEL;
    this.seen.add(v);
    return v;
  }

  /** How many distinct values have a label of their own. */
  get size(): number {
    return this.seen.size;
  }
}
