// Display formatting: units always shown, nulls as an em dash. Intl formatters are built once and
// reused (building one per call costs more than the rest of a list row). Dates and times have their one
// home in src/shared/dates.ts (shared with the CLI), re-exported here.
export { fmtClock, fmtDate, fmtDateTime, fmtDay, fmtMonth, fmtTime } from '../../shared/dates';
const DASH = '—';

const numberFormats = new Map<number, Intl.NumberFormat>();
function numberFormat(digits: number): Intl.NumberFormat {
  let f = numberFormats.get(digits);
  if (!f) {
    f = new Intl.NumberFormat(undefined, { maximumFractionDigits: digits, minimumFractionDigits: digits });
    numberFormats.set(digits, f);
  }
  return f;
}
const moneySmall = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 4 });
// Under a cent, two significant digits: a few requests' earnings are $0.000058, not "$0.00".
const moneyTiny = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 2 });
const moneyLarge = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export function fmtNumber(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH;
  return numberFormat(digits).format(n);
}

export function fmtInt(n: number | null | undefined): string {
  return fmtNumber(n, 0);
}

export function fmtMoney(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return DASH;
  const abs = Math.abs(n);
  return `${n < 0 ? '-' : ''}$${(abs > 0 && abs < 0.01 ? moneyTiny : abs < 1 ? moneySmall : moneyLarge).format(abs)}`;
}

export function fmtMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return DASH;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtGb(gb: number | null | undefined, digits = 1): string {
  return gb === null || gb === undefined ? DASH : `${fmtNumber(gb, digits)} GB`;
}

export function fmtAgo(ts: number | null | undefined, now = Date.now()): string {
  if (!ts) return DASH;
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function fmtPercent(ratio: number | null | undefined, digits = 1): string {
  return ratio === null || ratio === undefined ? DASH : `${fmtNumber(ratio * 100, digits)} %`;
}

/** A size in binary units, as disks and downloads count them: 1.5 GiB, 300 KiB, 12 B. */
export function fmtBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  if (n >= 1024 ** 2) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KiB`;
  return `${n} B`;
}

/** What is left of something in seconds, said so; unknown when there is no estimate yet. */
export function fmtTimeLeft(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return 'time left unknown';
  if (s < 60) return `${Math.max(1, Math.round(s))} s left`;
  if (s < 3600) return `${Math.round(s / 60)} min left`;
  return `${(s / 3600).toFixed(1)} h left`;
}
