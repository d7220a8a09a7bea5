// Bucket edges for reports, in the machine's local time: an owner's "day" starts at their midnight
// and their hours start when their clock shows :00 (in India that is :30 UTC). Every real time zone
// offset is a whole number of 15 minutes, so 15-minute buckets are the same in UTC and local time,
// and each local hour or day is a whole number of the ledger's 15-minute rollups.
import { LedgerValueError } from './db-errors';
import { ROLLUP_MS } from './migrations';

export type BucketSize = '15m' | 'hour' | 'day' | 'month';

export const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** Largest number of buckets one report may ask for (15-minute buckets over ~3 years). */
export const MAX_BUCKETS = 100_000;

export function floorToBucket(t: number, size: BucketSize): number {
  if (size === '15m') return t - (((t % ROLLUP_MS) + ROLLUP_MS) % ROLLUP_MS);
  const d = new Date(t);
  if (size === 'hour') d.setMinutes(0, 0, 0);
  else if (size === 'month') return new Date(d.getFullYear(), d.getMonth(), 1).getTime();
  else d.setHours(0, 0, 0, 0);
  return d.getTime();
}

export function nextBucket(start: number, size: BucketSize): number {
  if (size === '15m') return start + ROLLUP_MS;
  if (size === 'hour') return floorToBucket(start + HOUR_MS, 'hour');
  const d = new Date(start);
  if (size === 'month') return new Date(d.getFullYear(), d.getMonth() + 1, 1).getTime();
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime();
}

/** Starts of the buckets that overlap [from, to). The first starts at or before `from`. */
export function bucketStarts(from: number, to: number, size: BucketSize): number[] {
  const approx = Math.ceil((to - from) / (size === '15m' ? ROLLUP_MS : size === 'hour' ? HOUR_MS : size === 'day' ? DAY_MS : 28 * DAY_MS)) + 2;
  if (approx > MAX_BUCKETS) {
    throw new LedgerValueError(
      'too_many_buckets',
      `That range holds about ${approx} ${size} buckets (at most ${MAX_BUCKETS}); pick a shorter range or a larger bucket.`,
    );
  }
  const out: number[] = [];
  for (let s = floorToBucket(from, size); s < to; s = nextBucket(s, size)) out.push(s);
  return out;
}

/** Local midnight of the day holding `t`. */
export function startOfLocalDay(t: number): number {
  return floorToBucket(t, 'day');
}
