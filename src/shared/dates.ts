// The one home of date and time display, for the console and the CLI alike (test/shared/dates.test.ts
// fails on any other date formatting in src/renderer or src/cli). Local time, 24-hour, year first, the
// same on every machine and in every locale:
//   date       2026-12-01
//   date-time  2026-12-01 14:03:22
//   time       14:03:22   (today's events: log lines, request rows)
//   clock      14:03      (chart ticks)
//   day        12-01      (chart ticks over days: the date without its year)
//   month      2026-12    (monthly buckets)
// Machine formats (CSV cells, the wire, file names a program reads) keep ISO 8601 and are not display.
const DASH = '—';

const two = (n: number): string => (n < 10 ? `0${n}` : String(n));

function parts(ts: number): { y: number; mo: string; d: string; h: string; mi: string; s: string } {
  const t = new Date(ts);
  return { y: t.getFullYear(), mo: two(t.getMonth() + 1), d: two(t.getDate()), h: two(t.getHours()), mi: two(t.getMinutes()), s: two(t.getSeconds()) };
}

const valid = (ts: number | null | undefined): ts is number => typeof ts === 'number' && Number.isFinite(ts) && ts > 0;

export function fmtDate(ts: number | null | undefined): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.y}-${p.mo}-${p.d}`;
}

export function fmtDateTime(ts: number | null | undefined): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.y}-${p.mo}-${p.d} ${p.h}:${p.mi}:${p.s}`;
}

export function fmtTime(ts: number | null | undefined): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.h}:${p.mi}:${p.s}`;
}

export function fmtClock(ts: number): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.h}:${p.mi}`;
}

export function fmtDay(ts: number): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.mo}-${p.d}`;
}

export function fmtMonth(ts: number): string {
  if (!valid(ts)) return DASH;
  const p = parts(ts);
  return `${p.y}-${p.mo}`;
}

/** The machine format (ISO 8601, UTC): `<time dateTime>`, the wire. Not for reading by people. */
export function isoTime(ts: number): string {
  return new Date(ts).toISOString();
}
